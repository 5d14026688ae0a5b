"""The ``ves`` command line.

The command line is an entry point: it sits on top of every layer (``cli -> flows -> tasks ->
storage -> ves``) and nothing imports it.

    ves serve                      start the service (API, and the processing topology)
    ves status                     check every part the service needs (what /readyz says)
    ves keys create --tenant NAME  issue a key (the key alone on the last line of stdout)
    ves keys revoke KEY_ID         revoke a key
    ves keys list --tenant NAME    list a tenant's keys
    ves tenants list               list tenants
    ves retention sweep [--dry-run]
                                   delete the artifacts of runs past their plan's retention
    ves audit verify [--tenant NAME]
                                   walk the audit chains; exit 1 if one is broken
    ves sql ["SELECT ..."] [--format table|csv|json]
                                   query every published run with DuckDB (no query: a prompt)
    ves verify BUNDLE.zip [--public-key FILE]
                                 verify an evidence bundle offline (exit 0; 1 tampered; 2 no bundle)
    ves signing-key rotate|list    rotate or list the key that signs evidence bundles
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cli.evidence import add_commands as add_evidence_commands
from ves.errors import InvalidRequest, VesError
from ves.settings import Settings

if TYPE_CHECKING:
    from storage.catalog.tenants import TenantStore

# Each command imports what it needs when it runs: `ves verify` (offline, on any machine) and
# `ves keys` then start in a fraction of the time that importing Prefect, DuckDB and the
# detectors for every command took.
FORMATS = ("table", "csv", "json")  # of `ves sql` (cli/sql_shell.py prints them)


def _catalog(settings: Settings) -> TenantStore:
    from storage.catalog.database import Catalog
    from storage.catalog.tenants import TenantStore

    return TenantStore(Catalog.from_settings(settings))


def cmd_keys_create(settings: Settings, args: argparse.Namespace) -> int:
    store = _catalog(settings)
    tenant = store.find_tenant(args.tenant) or store.create_tenant(args.tenant, plan=args.plan)
    key, plaintext = store.create_key(tenant.tenant_id)
    print(f"tenant: {tenant.name} ({tenant.tenant_id}, plan {tenant.plan})")
    print(f"key id: {key.key_id} (revoke with: ves keys revoke {key.key_id})")
    print("the key is shown once; send it as 'Authorization: Bearer <key>':")
    print(plaintext)
    return 0


def cmd_keys_revoke(settings: Settings, args: argparse.Namespace) -> int:
    key = _catalog(settings).revoke_key(args.key_id)
    print(f"revoked {key.key_id} at {key.revoked_at}")
    return 0


def cmd_keys_list(settings: Settings, args: argparse.Namespace) -> int:
    store = _catalog(settings)
    tenant = store.find_tenant(args.tenant)
    if tenant is None:
        print(f"no tenant named {args.tenant!r}", file=sys.stderr)
        return 1
    for key in store.list_keys(tenant.tenant_id):
        print(
            f"{key.key_id}\tcreated {key.created_at}\t"
            + (f"revoked {key.revoked_at}" if key.revoked_at else "active")
        )
    return 0


def cmd_tenants_list(settings: Settings, args: argparse.Namespace) -> int:
    for tenant in _catalog(settings).list_tenants():
        print(f"{tenant.tenant_id}\t{tenant.name}\t{tenant.plan}\t{tenant.created_at}")
    return 0


def cmd_retention_sweep(settings: Settings, args: argparse.Namespace) -> int:
    from storage.catalog.database import Catalog
    from tasks.retention import sweep_retention

    report = sweep_retention(settings, Catalog.from_settings(settings), dry_run=args.dry_run)
    for line in report.lines():
        print(line)
    return 1 if report.refused else 0


def cmd_audit_verify(settings: Settings, args: argparse.Namespace) -> int:
    """One line per tenant's chain: records checked and the first broken link; exit 1 if any."""
    from storage.catalog.audit import AuditLog
    from storage.catalog.database import Catalog
    from storage.catalog.tenants import TenantStore

    catalog = Catalog.from_settings(settings)
    tenant_id = None
    if args.tenant is not None:
        tenant = TenantStore(catalog).find_tenant(args.tenant)
        tenant_id = tenant.tenant_id if tenant else args.tenant  # a name, or an id
    reports = AuditLog(catalog).verify(tenant_id)
    for report in reports:
        print(report.line())
    broken = [r for r in reports if not r.ok]
    print(f"{len(reports)} chain(s) checked, {len(broken)} broken")
    return 1 if broken else 0


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    """What ``GET /readyz`` answers, one line a part; exit 0 only when every part is ok."""
    from cli.supervisor import prefect_env
    from flows.readiness import check_readiness
    from storage.catalog.database import Catalog

    os.environ.setdefault("PREFECT_API_URL", prefect_env(settings)["PREFECT_API_URL"])
    readiness = check_readiness(settings, Catalog.from_settings(settings))
    for name, check in readiness.checks.items():
        print(f"{name:17s} {check.state:5s} {check.latency_ms:8.1f} ms  {check.detail}")
    print("ready" if readiness.ready else f"not ready: {', '.join(readiness.failing)}")
    return 0 if readiness.ready else 1


def cmd_sql(settings: Settings, args: argparse.Namespace) -> int:
    """One query, or a prompt, over every published run of the blob store (local or S3)."""
    from cli.sql_shell import print_result, prompt
    from storage.artifacts.analyst_views import analyst_connection, run_query
    from storage.artifacts.blobs import open_blob_store

    store = open_blob_store(settings)
    conn = analyst_connection(store.filesystem, store.root)
    try:
        if args.query is None:
            return prompt(conn, args.format)
        print_result(run_query(conn, args.query), args.format)
        return 0
    except InvalidRequest as exc:  # bad SQL is a usage error: exit 2, like argparse's
        print(f"error: {exc.detail}", file=sys.stderr)
        return 2
    finally:
        conn.close()


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    from cli.supervisor import serve
    from tasks.options import service_detector_mode

    try:
        service_detector_mode(settings)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return serve(settings)


def cmd_worker(settings: Settings, args: argparse.Namespace) -> int:
    from cli.supervisor import work

    return work(settings)


def build_parser() -> argparse.ArgumentParser:
    """The ``ves`` parser: every command, its arguments and their help (the documentation
    site's command line reference is rendered from it, ``docs/gen_reference.py``)."""
    parser = argparse.ArgumentParser(prog="ves", description="Video Evidence Service")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="start the service").set_defaults(run=cmd_serve)
    commands.add_parser(
        "worker", help="start one more worker (PREFECT_API_URL names the Prefect server)"
    ).set_defaults(run=cmd_worker)
    commands.add_parser(
        "status", help="is every part the service needs working? (what /readyz says)"
    ).set_defaults(run=cmd_status)
    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(required=True)
    create = keys.add_parser("create", help="issue a key (creates the tenant if new)")
    create.add_argument("--tenant", required=True, help="tenant name")
    create.add_argument("--plan", default="sandbox", help="plan of a new tenant")
    create.set_defaults(run=cmd_keys_create)
    revoke = keys.add_parser("revoke", help="revoke a key")
    revoke.add_argument("key_id")
    revoke.set_defaults(run=cmd_keys_revoke)
    listing = keys.add_parser("list", help="list a tenant's keys")
    listing.add_argument("--tenant", required=True)
    listing.set_defaults(run=cmd_keys_list)
    tenants = commands.add_parser("tenants", help="manage tenants").add_subparsers(required=True)
    tenants.add_parser("list", help="list tenants").set_defaults(run=cmd_tenants_list)
    retention = commands.add_parser("retention", help="artifact retention")
    sweep = retention.add_subparsers(required=True).add_parser(
        "sweep", help="delete the artifacts of runs past their plan's retention"
    )
    sweep.add_argument("--dry-run", action="store_true", help="list what is due; delete nothing")
    sweep.set_defaults(run=cmd_retention_sweep)
    audit = commands.add_parser("audit", help="the audit trail").add_subparsers(required=True)
    verify = audit.add_parser("verify", help="walk each tenant's audit chain; exit 1 if broken")
    verify.add_argument("--tenant", help="only this tenant (name or id)")
    verify.set_defaults(run=cmd_audit_verify)
    sql = commands.add_parser(
        "sql", help="query every published run with DuckDB (docs/reference/artifacts.md)"
    )
    sql.add_argument("query", nargs="?", help="SQL over the views; none opens a prompt")
    sql.add_argument("--format", choices=FORMATS, default="table", help="how results print")
    sql.set_defaults(run=cmd_sql)
    add_evidence_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors of the service print as one line and exit 1."""
    args = build_parser().parse_args(argv)
    if offline := getattr(args, "run_offline", None):  # needs no settings (ves verify)
        code: int = offline(args)
        return code
    run: Callable[[Settings, argparse.Namespace], int] = args.run
    try:
        return run(Settings(), args)
    except VesError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
