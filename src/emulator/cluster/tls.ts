// The emulator's own certificate authority and serving certificate, so clients verify TLS exactly as
// they would against a real cluster. The CA is generated once per state directory and reused, so a
// kubeconfig written earlier keeps working; the serving certificate is renewed when its names change.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import forge from "node-forge";

export interface ServingMaterial {
  caCertPem: string;
  certPem: string;
  keyPem: string;
}

interface KeyPair {
  privateKeyPem: string;
  publicKeyPem: string;
}

// Node's native RSA generation takes milliseconds where node-forge's pure-JS one takes seconds.
function generateRsaKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

function serialNumber(): string {
  // A leading 0x01 keeps the DER integer positive.
  return `01${randomBytes(15).toString("hex")}`;
}

function yearsFromNow(years: number): Date {
  const date = new Date();
  date.setFullYear(date.getFullYear() + years);
  return date;
}

export interface CertificateAndKey {
  certPem: string;
  keyPem: string;
}

/** A self-signed certificate authority, valid ten years. */
export function createCertificateAuthority(commonName: string): CertificateAndKey {
  const keys = generateRsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = yearsFromNow(10);
  const subject = [{ name: "commonName", value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKeyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

export interface LeafCertificate {
  commonName: string;
  /** serverAuth with these subject alternative names, or clientAuth (a client has no names). */
  usage: { server: string[] } | "client";
}

/** A certificate signed by `ca`, valid a year. */
export function signCertificate(ca: CertificateAndKey, leaf: LeafCertificate): CertificateAndKey {
  const keys = generateRsaKeyPair();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = yearsFromNow(1);
  cert.setSubject([{ name: "commonName", value: leaf.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  const names = leaf.usage === "client" ? [] : leaf.usage.server;
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    leaf.usage === "client"
      ? { name: "extKeyUsage", clientAuth: true }
      : { name: "extKeyUsage", serverAuth: true },
    ...(names.length === 0
      ? []
      : [
          {
            name: "subjectAltName",
            altNames: names.map((name) => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })),
          },
        ]),
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

function servingCertStillFits(certPem: string, caCertPem: string, names: string[]): boolean {
  try {
    const cert = forge.pki.certificateFromPem(certPem);
    const ca = forge.pki.certificateFromPem(caCertPem);
    if (!ca.verify(cert)) return false;
    const thirtyDays = 30 * 24 * 3600 * 1000;
    if (cert.validity.notAfter.getTime() - Date.now() < thirtyDays) return false;
    const extension = cert.getExtension("subjectAltName") as { altNames?: { value?: string; ip?: string }[] };
    const present = new Set((extension?.altNames ?? []).map((alt) => alt.ip ?? alt.value ?? ""));
    return names.every((name) => present.has(name));
  } catch {
    return false;
  }
}

/** Names the serving certificate covers: loopback, the usual in-cluster names, and the listen host. */
export function servingNames(host: string): string[] {
  const names = [
    "127.0.0.1",
    "::1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
  ];
  if (host !== "" && host !== "0.0.0.0" && host !== "::" && !names.includes(host)) names.push(host);
  return names;
}

export function loadOrCreateServingMaterial(stateDir: string, host: string): ServingMaterial {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const caCertPath = join(stateDir, "ca.crt");
  const caKeyPath = join(stateDir, "ca.key");
  const certPath = join(stateDir, "serving.crt");
  const keyPath = join(stateDir, "serving.key");

  let ca: CertificateAndKey;
  if (existsSync(caCertPath) && existsSync(caKeyPath)) {
    ca = { certPem: readFileSync(caCertPath, "utf8"), keyPem: readFileSync(caKeyPath, "utf8") };
  } else {
    ca = createCertificateAuthority("lab-console-emulator-ca");
    writeFileSync(caKeyPath, ca.keyPem, { mode: 0o600 });
    writeFileSync(caCertPath, ca.certPem);
  }

  const names = servingNames(host);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const certPem = readFileSync(certPath, "utf8");
    if (servingCertStillFits(certPem, ca.certPem, names)) {
      return { caCertPem: ca.certPem, certPem, keyPem: readFileSync(keyPath, "utf8") };
    }
  }
  const serving = signCertificate(ca, { commonName: "kube-apiserver", usage: { server: names } });
  writeFileSync(keyPath, serving.keyPem, { mode: 0o600 });
  writeFileSync(certPath, serving.certPem);
  return { caCertPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem };
}
