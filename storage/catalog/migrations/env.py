"""Alembic's entry point: runs the revisions on the connection that ``storage.catalog.migrations``
passes in.

There is no offline (``--sql``) mode and no engine of its own: the caller owns the connection and
its transaction (and the lock that keeps a second process from migrating at the same time).
"""

from __future__ import annotations

from alembic import context

from storage.catalog.migrations import VERSION_TABLE

context.configure(connection=context.config.attributes["connection"], version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()
