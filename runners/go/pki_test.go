package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testDataDir is a data directory with the orchestrator's layout (pki-v2/<key>/...) for the
// given key types, made once per test binary: a root, an intermediate, a server leaf for
// server.tlsbench.test and a client leaf, as crates/harness/src/pki.rs makes them.
func testDataDir(t *testing.T, keys ...KeyType) string {
	t.Helper()
	testPKI.once.Do(func() {
		dir, err := os.MkdirTemp("", "tlsbench-go-test")
		if err != nil {
			panic(err)
		}
		testPKI.dir = dir
	})
	testPKI.mu.Lock()
	defer testPKI.mu.Unlock()
	for _, key := range keys {
		dir := filepath.Join(testPKI.dir, "pki-v2", string(key))
		if _, err := os.Stat(filepath.Join(dir, "client.key")); err == nil {
			continue
		}
		if err := writeTestPKI(dir, key); err != nil {
			t.Fatalf("making %s certificates: %v", key, err)
		}
	}
	return testPKI.dir
}

var testPKI struct {
	once sync.Once
	mu   sync.Mutex
	dir  string
}

func newTestKey(key KeyType) (crypto.Signer, error) {
	switch key {
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case ECDSAP384:
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case Ed25519:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	panic("no test key of type " + string(key))
}

func writeTestPKI(dir string, key KeyType) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	serial := int64(0)
	issue := func(
		template *x509.Certificate, parent *x509.Certificate, parentKey crypto.Signer,
	) (*x509.Certificate, crypto.Signer, error) {
		k, err := newTestKey(key)
		if err != nil {
			return nil, nil, err
		}
		serial++
		template.SerialNumber = big.NewInt(serial)
		template.NotBefore, template.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		if parent == nil {
			parent, parentKey = template, k
		}
		der, err := x509.CreateCertificate(rand.Reader, template, parent, k.Public(), parentKey)
		if err != nil {
			return nil, nil, err
		}
		cert, err := x509.ParseCertificate(der)
		return cert, k, err
	}
	ca := func(name string) *x509.Certificate {
		return &x509.Certificate{
			Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		}
	}
	leaf := func(name string, usage x509.ExtKeyUsage) *x509.Certificate {
		return &x509.Certificate{
			Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
	}
	root, rootKey, err := issue(ca("tlsbench test root"), nil, nil)
	if err != nil {
		return err
	}
	inter, interKey, err := issue(ca("tlsbench test intermediate"), root, rootKey)
	if err != nil {
		return err
	}
	server, serverKey, err := issue(leaf(serverName, x509.ExtKeyUsageServerAuth), inter, interKey)
	if err != nil {
		return err
	}
	client, clientKey, err := issue(leaf("client.tlsbench.test", x509.ExtKeyUsageClientAuth), inter, interKey)
	if err != nil {
		return err
	}
	certs := func(cs ...*x509.Certificate) []byte {
		var out []byte
		for _, c := range cs {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
		return out
	}
	privateKey := func(k crypto.Signer) ([]byte, error) {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), err
	}
	serverPEM, err := privateKey(serverKey)
	if err != nil {
		return err
	}
	clientPEM, err := privateKey(clientKey)
	if err != nil {
		return err
	}
	for name, content := range map[string][]byte{
		"ca.pem": certs(root), "chain.pem": certs(server, inter), "server.key": serverPEM,
		"client-chain.pem": certs(client, inter),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return err
		}
	}
	// Written last, as the harness does: its presence means the set is whole.
	return os.WriteFile(filepath.Join(dir, "client.key"), clientPEM, 0o600)
}

func TestMain(m *testing.M) {
	// A child of runInFreshProcess: the runner's main, in a process of its own.
	if args := os.Getenv(freshProcessArgs); args != "" {
		startedNs = monotonicNs()
		line, err := jsonLine(run(strings.Split(args, "\t"), io.Discard, false))
		if err != nil {
			panic(err)
		}
		os.Stdout.Write(line)
		os.Exit(0)
	}
	code := m.Run()
	if testPKI.dir != "" {
		os.RemoveAll(testPKI.dir)
	}
	os.Exit(code)
}
