// An independent C2PA check of an MP4 clip, with @trustnxt/c2pa-ts (pure TypeScript, no c2pa-rs).
//
//   node verify.mjs CLIP.mp4 [ROOTS.pem]
//
// Prints one JSON object: whether a manifest is present, the claim signature and the BMFF hash
// binding validate, every status code, the actions, the assertion labels, the service's evidence
// assertion, and (with ROOTS.pem) whether the signing certificate was issued by one of those
// roots. Exit 0 when all holds, 1 when a check fails, 2 when the file cannot be read.
//
// c2pa-ts 0.9.4 reads BMFF only for HEIF brands (its BMFF.canReadBrands); its BMFF hash check is
// the same for MP4, so the MP4 brands are added to that set here. It does no chain-of-trust
// validation of its own, so the issuer check is done with @peculiar/x509 (its own dependency).
import * as fs from 'node:fs/promises';
import { X509Certificate } from '@peculiar/x509';
import { BMFF } from '@trustnxt/c2pa-ts/asset';
import { SuperBox } from '@trustnxt/c2pa-ts/jumbf';
import { ManifestStore, ValidationResult } from '@trustnxt/c2pa-ts/manifest';

for (const brand of ['isom', 'iso2', 'mp41', 'mp42', 'avc1']) BMFF.canReadBrands.add(brand);

async function issuedByRoot(signature, rootsPem) {
    if (!rootsPem) return null;
    const blocks = rootsPem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g);
    const roots = (blocks ?? []).map((pem) => new X509Certificate(pem));
    const leaf = new X509Certificate(signature.signatureData.certificate.rawData);
    for (const root of roots) {
        if (leaf.issuer !== root.subject) continue;
        const now = new Date();
        const valid = root.notBefore <= now && now < root.notAfter;
        if (valid && (await leaf.verify({ publicKey: root.publicKey, date: now }))) return true;
    }
    return false;
}

function assertionContent(assertion) {
    const box = assertion.sourceBox?.contentBoxes?.[0];
    return box?.content ?? null;
}

async function check(path, rootsPem) {
    const buf = new Uint8Array(await fs.readFile(path));
    const asset = new BMFF(buf);
    const jumbf = asset.getManifestJUMBF();
    if (!jumbf) return { manifest_present: false, ok: false };
    let result;
    let manifest;
    try {
        const store = ManifestStore.read(SuperBox.fromBuffer(jumbf));
        manifest = store.getActiveManifest();
        result = await store.validate(asset);
    } catch (e) {
        result = ValidationResult.fromError(e);
    }
    const entries = result.statusEntries ?? [];
    const codes = (success) => entries.filter((e) => e.success === success).map((e) => e.code);
    const assertions = manifest?.assertions?.assertions ?? [];
    const actions = assertions.filter((a) => a.label?.startsWith('c2pa.actions'));
    const evidence = assertions.find((a) => a.label === 'com.video-evidence-service.evidence');
    const trusted = manifest?.signature ? await issuedByRoot(manifest.signature, rootsPem) : null;
    const out = {
        manifest_present: true,
        label: manifest?.label ?? null,
        valid: result.isValid,
        signature_valid: codes(true).includes('claimSignature.validated'),
        bmff_hash_bound: codes(true).includes('assertion.bmffHash.match'),
        issued_by_trusted_root: trusted,
        success_codes: codes(true),
        failure_codes: codes(false),
        actions: actions.flatMap((a) => a.actions.map((x) => x.action)),
        assertion_labels: assertions.map((a) => a.label),
        evidence: evidence ? assertionContent(evidence) : null,
    };
    out.ok = out.valid && out.signature_valid && out.bmff_hash_bound && trusted !== false;
    return out;
}

if (process.argv.length < 3) {
    console.error('usage: node verify.mjs CLIP.mp4 [ROOTS.pem]');
    process.exit(2);
}
try {
    const rootsPem = process.argv[3] ? await fs.readFile(process.argv[3], 'utf8') : null;
    const out = await check(process.argv[2], rootsPem);
    console.log(JSON.stringify(out, null, 1));
    process.exit(out.ok ? 0 : 1);
} catch (e) {
    console.log(JSON.stringify({ error: String(e?.message ?? e) }));
    process.exit(2);
}
