package main

// The context scenarios and the cold command: their replies' structure, the trust store gate and
// the errors. No timings are asserted: only that what was timed is there and above zero.

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// freshProcessArgs names the environment variable that makes the test binary a runner (TestMain):
// Go keeps its system pool and a process's start for the process, so those tests need new ones.
const freshProcessArgs = "TLSBENCH_GO_TEST_RUNNER_ARGS"

// runInFreshProcess runs the runner's command in a new process with env added, and decodes its reply.
func runInFreshProcess(t *testing.T, env []string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), freshProcessArgs+"="+strings.Join(args, "\t")), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var reply map[string]any
	if err := json.Unmarshal(out, &reply); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return reply
}

// bundle writes a trust store file: others self-signed roots, then the test CA of key (or not).
func bundle(t *testing.T, dataDir string, key KeyType, others int, withTestCA bool) string {
	t.Helper()
	var roots []byte
	for i := range others {
		public, private, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		template := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 1)),
			Subject: pkix.Name{CommonName: fmt.Sprintf("root %d", i)}, NotAfter: time.Now().Add(time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		der, err := x509.CreateCertificate(rand.Reader, template, template, public, private)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if withTestCA {
		ca, err := os.ReadFile(filepath.Join(dataDir, "pki-v2", string(key), "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, ca...)
	}
	path := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(path, roots, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// valuesOf are a reply's values as side/metric, and each value.
func valuesOf(t *testing.T, report *SampleReport) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, v := range report.Values {
		got[v.Side.String()+"/"+v.Metric] = v.Value
	}
	return got
}

func TestAContextScenarioMeasuresItsSideAloneAndVerifiesAHandshake(t *testing.T) {
	dir := testDataDir(t, ECDSAP256, RSA2048)
	cases := []struct {
		scenario string
		side     Side
	}{
		{"context-server_1.3_x25519_ecdsa-p256_aes-128-gcm", Server},
		{"context-server_1.2_secp256r1_rsa-2048_aes-256-gcm_mtls", Server},
		{"context-client_1.3_default_ecdsa-p256_default", Client},
		{"context-client_1.2_x25519_rsa-2048_aes-128-gcm_mtls", Client},
	}
	for _, c := range cases {
		s, err := ParseScenario(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		report, err := contextSample(s, MeasureTime, dir, sampleSpec{minTime: 2e6})
		if err != nil {
			t.Fatalf("%s: %v", c.scenario, err)
		}
		got := valuesOf(t, report)
		for _, metric := range []string{"contexts_per_s", "cpu_contexts_per_s", "gc_percent"} {
			if _, ok := got[c.side.String()+"/"+metric]; !ok {
				t.Errorf("%s: no %s %s in %v", c.scenario, c.side, metric, got)
			}
		}
		if len(got) != 3 || report.Iterations == 0 || got[c.side.String()+"/contexts_per_s"] <= 0 {
			t.Errorf("%s: %d iterations, values %v: the measured side's three, above zero", c.scenario,
				report.Iterations, got)
		}
		if len(report.Negotiated) != 2 || !strings.HasPrefix(report.Negotiated[0].Negotiated, string(s.Version)) {
			t.Errorf("%s: the gate's handshake negotiated %v", c.scenario, report.Negotiated)
		}
		heap, err := contextSample(s, MeasureHeap, dir, sampleSpec{})
		if err != nil {
			t.Fatalf("%s, heap: %v", c.scenario, err)
		}
		got = valuesOf(t, heap)
		if got[c.side.String()+"/runtime_alloc_bytes_per_context"] <= 0 || len(got) != 1 {
			t.Errorf("%s, heap: %v", c.scenario, got)
		}
		rss, err := contextSample(s, MeasureRss, dir, sampleSpec{})
		if err != nil {
			t.Fatalf("%s, rss: %v", c.scenario, err)
		}
		got = valuesOf(t, rss)
		if got[c.side.String()+"/rss_context_bytes"] <= 0 || len(got) != 1 || rss.Iterations != rssContexts {
			t.Errorf("%s, rss: %d contexts held, %v", c.scenario, rss.Iterations, got)
		}
	}
}

func TestAContextScenarioIsTakenInOneProcessNotUnderIo(t *testing.T) {
	s, err := ParseScenario("context-client_1.3_x25519_ecdsa-p256_aes-128-gcm")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkMeasure(MeasureIo, s); err == nil || !isUnsupported(err) {
		t.Errorf("io: %v", err)
	}
	dir := testDataDir(t, ECDSAP256)
	reply := replyOf(side([]string{"--role", "client", "--stack", "go", "--peer-stack", "openssl",
		"--peer-fd", "0", "--scenario", s.Name(), "--data-dir", dir}, false))
	if reply.Status != "unsupported" || !strings.Contains(reply.Reason, "one process") {
		t.Errorf("side: %+v", reply)
	}
	missing := replyOf(sample([]string{"--client", "go", "--server", "go", "--scenario", s.Name(),
		"--data-dir", t.TempDir()}))
	if missing.Status != "failed" || !strings.Contains(missing.Reason, "ca.pem: no such file") {
		t.Errorf("no certificates: %+v", missing)
	}
}

// The gate: the system store counts its roots, and a store without the test CA, or with fewer
// roots than a system's, fails the sample.
func TestTheSystemTrustStoreCountsItsRootsAndMustVerifyTheTestCA(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	name := "context-client-system_1.3_x25519_ecdsa-p256_aes-128-gcm"
	args := []string{"sample", "--client", "go", "--server", "go", "--scenario", name, "--data-dir", dir,
		"--min-time-ms", "2", "--warmup-ms", "0"}
	// Go reads SSL_CERT_DIR's files too (/etc/ssl/certs by default): here, none.
	certDir := "SSL_CERT_DIR=" + t.TempDir()
	run := func(others int, withTestCA bool) map[string]any {
		return runInFreshProcess(t, []string{"SSL_CERT_FILE=" + bundle(t, dir, ECDSAP256, others, withTestCA), certDir},
			args...)
	}
	ok := run(120, true)
	if ok["status"] != "ok" {
		t.Fatalf("%v", ok)
	}
	roots := -1.0
	for _, v := range ok["values"].([]any) {
		value := v.(map[string]any)
		if value["side"] != "client" {
			t.Errorf("a server value: %v", value)
		}
		if value["metric"] == "trust_roots" {
			roots = value["value"].(float64)
		}
	}
	if roots != 121 {
		t.Errorf("trust_roots %v, the bundle holds 121: %v", roots, ok)
	}
	for _, c := range []struct {
		others     int
		withTestCA bool
		reason     string
	}{
		{120, false, "gate failed: the handshake (handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm) from the last " +
			"context built did not complete: client handshake failed: tls: failed to verify certificate: " +
			"x509: certificate signed by unknown authority"},
		{2, true, "gate failed: the system's trust store held 3 roots (fewer than 100): is SSL_CERT_FILE read?"},
	} {
		failed := run(c.others, c.withTestCA)
		if failed["status"] != "failed" || !strings.HasPrefix(failed["reason"].(string), c.reason) {
			t.Errorf("%d roots, test CA %v: %v", c.others, c.withTestCA, failed)
		}
	}
	none := runInFreshProcess(t, []string{"SSL_CERT_FILE="}, args...)
	if none["status"] != "failed" || !strings.HasPrefix(none["reason"].(string),
		"context-client-system needs SSL_CERT_FILE: the system's bundle with the test CA appended") {
		t.Errorf("without SSL_CERT_FILE: %v", none)
	}
}

func TestColdReportsEachSidesContextAndHandshakesFromAFreshProcess(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	env := []string{"SSL_CERT_FILE=" + bundle(t, dir, ECDSAP256, 100, true)}
	for _, c := range []struct {
		scenario string
		resumes  bool
	}{
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", false},
		{"handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls", true},
		{"handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", true},
		{"context-client-system_1.3_default_ecdsa-p256_default", false},
	} {
		reply := runInFreshProcess(t, env, "cold", "--client", "go", "--server", "go", "--scenario", c.scenario,
			"--data-dir", dir, "--spawned-at-ns", "1")
		cold, ok := reply["cold"].(map[string]any)
		if reply["status"] != "ok" || !ok || cold["process_start_ns"].(float64) <= 0 {
			t.Fatalf("%s: %v", c.scenario, reply)
		}
		// A resumption scenario's first handshake is the seed: no second full one.
		fields := []string{"context_ns", "first_ns", "second_ns"}
		if c.resumes {
			fields = []string{"context_ns", "first_ns", "first_resume_ns", "second_resume_ns"}
		}
		for _, side := range []string{"client", "server"} {
			figures := cold[side].(map[string]any)
			var names []string
			for name, value := range figures {
				names = append(names, name)
				if value.(float64) <= 0 {
					t.Errorf("%s: %s %s %v", c.scenario, side, name, value)
				}
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(fields))
			if !slices.Equal(names, want) {
				t.Errorf("%s: %s has %v, want %v", c.scenario, side, names, want)
			}
		}
	}
}

func TestColdRefusesWhatItCannotTime(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	cases := []struct{ args, status, reason string }{
		{"--scenario transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "unsupported",
			"cold takes a handshake scenario (handshake-full, handshake-resume-id, handshake-resume-ticket; " +
				"the Go runner also context-client-system), not transfer"},
		{"--scenario handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm --count-side client", "unsupported",
			"go: callgrind counts between client requests"},
		{"--scenario handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm --spawned-at-ns 9223372036854775807", "failed",
			"cold: --spawned-at-ns 9223372036854775807 is not a CLOCK_MONOTONIC reading before this process began"},
		{"--scenario handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm", "unsupported", "session-ID"},
	}
	for _, c := range cases {
		args := append([]string{"cold", "--client", "go", "--server", "go", "--data-dir", dir},
			strings.Fields(c.args)...)
		reply := run(args, nil, false).(ColdReply)
		if reply.Status != c.status || !strings.Contains(reply.Reason, c.reason) || reply.Cold != nil {
			t.Errorf("%s: %+v", c.args, reply)
		}
	}
	reply := run([]string{"cold", "--client", "go", "--server", "openssl", "--scenario",
		"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"}, nil, false).(ColdReply)
	if reply.Status != "failed" || reply.Reason != "stack `openssl` is not in this runner (it has: go)" {
		t.Errorf("another stack: %+v", reply)
	}
}
