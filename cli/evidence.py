"""``ves verify`` (an evidence bundle, offline) and ``ves signing-key`` (the key that signs them).

``ves verify`` needs nothing of the service: no settings, no catalog, no network; only the zip
and, to prove who signed it, a public key obtained independently.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from verify.bundle import verify_bundle
from verify.credentials import load_trust_anchors
from ves.credentials import ContentCredentialsCA
from ves.errors import NotABundle
from ves.settings import Settings
from ves.signing import KeyRing

EXIT_TAMPERED, EXIT_NOT_A_BUNDLE = 1, 2


def cmd_verify(args: argparse.Namespace) -> int:
    """Print one line per check group and the verdict; 0 verified, 1 tampered, 2 no bundle."""
    try:
        key = args.public_key.read_bytes() if args.public_key else None
        trust = load_trust_anchors(args.trust.read_bytes()) if args.trust else None
        verdict = verify_bundle(args.bundle, key, trust)
    except ValueError as exc:
        print(f"error: --trust {args.trust} holds no PEM certificate ({exc})", file=sys.stderr)
        return EXIT_NOT_A_BUNDLE
    except (NotABundle, OSError) as exc:
        print(f"error: {getattr(exc, 'detail', exc)}", file=sys.stderr)
        return EXIT_NOT_A_BUNDLE
    for line in verdict.lines():
        print(line)
    return 0 if verdict.ok else EXIT_TAMPERED


def cmd_signing_key_rotate(settings: Settings, args: argparse.Namespace) -> int:
    ring = KeyRing.from_settings(settings)
    old, new = ring.rotate()
    print(f"retired {old.key_id} (its public key stays listed; bundles it signed still verify)")
    print(f"active  {new.key_id}")
    old_root, new_root = ContentCredentialsCA.from_settings(settings).rotate()
    print(f"retired Content Credentials root {old_root} (still published; its clips still verify)")
    print(f"active  Content Credentials root {new_root} (a new root and clip signer)")
    if settings.signing_key_file is not None:
        print(f"copy {ring.key_file} to every machine that signs (docs/how-to/scaling-out.md)")
    return 0


def cmd_signing_key_list(settings: Settings, args: argparse.Namespace) -> int:
    for key in KeyRing.from_settings(settings).public_keys():
        state = "active" if key.active else f"retired {key.retired_at}"
        print(f"{key.key_id}\tcreated {key.created_at}\t{state}")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``verify`` (offline: run without settings) and ``signing-key``."""
    verify = commands.add_parser(
        "verify", help="verify an evidence bundle offline (exit 0 only when all holds)"
    )
    verify.add_argument("bundle", type=Path, help="the bundle (.zip)")
    verify.add_argument(
        "--public-key",
        type=Path,
        help="the service's public key (PEM, from GET /api/public/signing-keys); without it the"
        " bundle's own key is used, which proves integrity but not origin",
    )
    verify.add_argument(
        "--trust",
        type=Path,
        help="the service's Content Credentials root certificate(s) (PEM, the"
        " c2pa_trust_anchors_pem of GET /api/public/signing-keys): each clip's C2PA manifest"
        " must then validate as Trusted under them",
    )
    verify.set_defaults(run_offline=cmd_verify)
    keys = commands.add_parser("signing-key", help="the key that signs evidence bundles")
    actions = keys.add_subparsers(required=True)
    actions.add_parser(
        "rotate", help="make a new signing key; the old one's public key stays listed"
    ).set_defaults(run=cmd_signing_key_rotate)
    actions.add_parser("list", help="list the signing keys").set_defaults(run=cmd_signing_key_list)
