package main

// The certificates the orchestrator made, read from its data directory
// (crates/harness/src/pki.rs: <data-dir>/pki-v2/<key>/...). A runner in another language only
// reads them.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// credentials are one key type's certificates, as the orchestrator wrote them.
type credentials struct {
	roots          *x509.CertPool
	server, client tls.Certificate
}

// defaultDataDir is $TLSBENCH_DATA_DIR, else $XDG_DATA_HOME/tlsbench, else
// ~/.local/share/tlsbench.
func defaultDataDir() string {
	if dir := os.Getenv("TLSBENCH_DATA_DIR"); dir != "" {
		return dir
	}
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "tlsbench")
	}
	if home := os.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local/share/tlsbench")
	}
	return filepath.Join(os.TempDir(), "tlsbench")
}

func loadCredentials(dataDir string, key KeyType) (*credentials, error) {
	dir := filepath.Join(dataDir, "pki-v2", string(key))
	files := map[string][]byte{}
	for _, name := range []string{"ca.pem", "chain.pem", "server.key", "client-chain.pem", "client.key"} {
		b, err := readPKIFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	c := &credentials{roots: x509.NewCertPool()}
	if !c.roots.AppendCertsFromPEM(files["ca.pem"]) {
		return nil, fmt.Errorf("%s: no certificate", filepath.Join(dir, "ca.pem"))
	}
	var err error
	if c.server, err = tls.X509KeyPair(files["chain.pem"], files["server.key"]); err != nil {
		return nil, fmt.Errorf("%s, server.key: %w", filepath.Join(dir, "chain.pem"), err)
	}
	if c.client, err = tls.X509KeyPair(files["client-chain.pem"], files["client.key"]); err != nil {
		return nil, fmt.Errorf("%s, client.key: %w", filepath.Join(dir, "client-chain.pem"), err)
	}
	return c, nil
}

// readPKIFile reads one certificate or key file; a missing one is named by its path.
func readPKIFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, fmt.Errorf(
			"reading %s: %v (the orchestrator creates the certificates before it starts a runner)", path, err)
	}
	return data, nil
}
