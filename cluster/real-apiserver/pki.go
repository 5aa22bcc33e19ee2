package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a certificate with its private key, both PEM-encoded, and the parsed form for signing.
type keyPair struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

// Everything here lives as long as one run of the program (its data folder is removed on exit), so a
// day is ample and a leaked file is useless soon after.
const certLifetime = 24 * time.Hour

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
}

// newCA makes a self-signed certificate authority.
func newCA(commonName string) (*keyPair, error) {
	return signed(&x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
}

// leafSpec says who a certificate names and what it may be used for.
type leafSpec struct {
	commonName   string
	organization []string
	dnsNames     []string
	ips          []net.IP
	usage        x509.ExtKeyUsage
}

func (ca *keyPair) issue(spec leafSpec) (*keyPair, error) {
	return signed(&x509.Certificate{
		Subject:     pkix.Name{CommonName: spec.commonName, Organization: spec.organization},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{spec.usage},
		DNSNames:    spec.dnsNames,
		IPAddresses: spec.ips,
	}, ca)
}

// signed gives template a new key, a serial number and its lifetime, and signs it with issuer's key,
// or with its own when issuer is nil (a self-signed CA).
func signed(template *x509.Certificate, issuer *keyPair) (*keyPair, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	if template.SerialNumber, err = serialNumber(); err != nil {
		return nil, err
	}
	now := time.Now()
	template.NotBefore = now.Add(-time.Minute)
	template.NotAfter = now.Add(certLifetime)
	parent, parentKey := template, key
	if issuer != nil {
		parent, parentKey = issuer.cert, issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: pemCert(der), keyPEM: keyPEM}, nil
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pki holds the files kube-apiserver is given, by path.
type pki struct {
	dir string
	// ca signs the serving certificate and the client certificates the API server accepts.
	ca    *keyPair
	admin *keyPair
	// caFile, servingCert/Key: --client-ca-file, --tls-cert-file, --tls-private-key-file.
	caFile, servingCertFile, servingKeyFile string
	// kube-apiserver's client certificate for kubelets (pod logs): --kubelet-client-certificate/key.
	kubeletClientCertFile, kubeletClientKeyFile string
	// The aggregation layer: kube-apiserver presents the proxy client certificate to aggregated API
	// servers (KubeVirt's subresources later), which trust it through the front-proxy CA.
	frontProxyCAFile, proxyClientCertFile, proxyClientKeyFile string
	// One ECDSA key both signs service-account tokens and verifies them.
	serviceAccountKeyFile string
}

// The names the API server answers to: loopback, and the in-cluster names of the kubernetes Service
// (its first address in serviceCIDR below) so that a pod-like client verifying them also succeeds.
var (
	servingDNSNames = []string{
		"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local",
	}
	servingIPs = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
)

// frontProxyClientName is the proxy client certificate's CN, the one --requestheader-allowed-names admits.
const frontProxyClientName = "front-proxy-client"

// kubeletClientName is kube-apiserver's identity towards kubelets, as kubeadm names it; its group
// system:masters passes the kubelet's authorization check (kubeadm before 1.29 gave the same group).
const kubeletClientName = "kube-apiserver-kubelet-client"

// adminUser is the admin kubeconfig's identity: system:masters passes every authorization check.
const adminUser = "lab-admin"

func makePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newCA("lab-real-apiserver-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.issue(leafSpec{
		commonName: "kube-apiserver", dnsNames: servingDNSNames, ips: servingIPs,
		usage: x509.ExtKeyUsageServerAuth,
	})
	if err != nil {
		return nil, err
	}
	admin, err := ca.issue(leafSpec{
		commonName: adminUser, organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth,
	})
	if err != nil {
		return nil, err
	}
	kubeletClient, err := ca.issue(leafSpec{
		commonName: kubeletClientName, organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth,
	})
	if err != nil {
		return nil, err
	}
	frontProxyCA, err := newCA("lab-real-apiserver-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	proxyClient, err := frontProxyCA.issue(leafSpec{commonName: frontProxyClientName, usage: x509.ExtKeyUsageClientAuth})
	if err != nil {
		return nil, err
	}
	_, serviceAccountKey, err := newKey()
	if err != nil {
		return nil, err
	}

	p := &pki{dir: dir, ca: ca, admin: admin}
	files := []struct {
		target *string
		name   string
		data   []byte
	}{
		{&p.caFile, "ca.crt", ca.certPEM},
		{&p.servingCertFile, "apiserver.crt", serving.certPEM},
		{&p.servingKeyFile, "apiserver.key", serving.keyPEM},
		{&p.kubeletClientCertFile, "apiserver-kubelet-client.crt", kubeletClient.certPEM},
		{&p.kubeletClientKeyFile, "apiserver-kubelet-client.key", kubeletClient.keyPEM},
		{&p.frontProxyCAFile, "front-proxy-ca.crt", frontProxyCA.certPEM},
		{&p.proxyClientCertFile, "front-proxy-client.crt", proxyClient.certPEM},
		{&p.proxyClientKeyFile, "front-proxy-client.key", proxyClient.keyPEM},
		{&p.serviceAccountKeyFile, "service-account.key", serviceAccountKey},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return nil, err
		}
		*f.target = path
	}
	return p, nil
}

// writeKubeconfig writes a kubeconfig for the admin client certificate, with everything inline so it
// stays usable wherever it is copied (as long as this run lasts). Written to a temporary name and
// renamed, so a reader never sees half a file.
func (p *pki) writeKubeconfig(path, server string) error {
	b64 := base64.StdEncoding.EncodeToString
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: lab-real
    cluster:
      server: %s
      certificate-authority-data: %s
users:
  - name: %s
    user:
      client-certificate-data: %s
      client-key-data: %s
contexts:
  - name: lab-real
    context:
      cluster: lab-real
      user: %s
current-context: lab-real
`, server, b64(p.ca.certPEM), adminUser, b64(p.admin.certPEM), b64(p.admin.keyPEM), adminUser)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
