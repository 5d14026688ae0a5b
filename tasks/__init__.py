"""Pipeline stages, one module each: a pure core that tests call, and a thin Prefect ``@task``."""
