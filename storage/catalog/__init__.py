"""The SQL catalog (SQLite or PostgreSQL): engines, tables, migrations, and one store per entity."""
