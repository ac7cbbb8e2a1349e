package main

// The context scenarios and the cold command: their replies' structure, the trust store gate and
// the errors. No timings are asserted: only that what was timed is there and above zero.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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

// bundle writes a trust store file: the test CA of key (or not) after two other roots.
func bundle(t *testing.T, dataDir string, key KeyType, withTestCA bool) string {
	t.Helper()
	var pem []byte
	for _, other := range []KeyType{RSA2048, Ed25519} {
		// Another data directory's roots: the same subjects, other keys.
		dir := t.TempDir()
		if err := writeTestPKI(filepath.Join(dir, string(other)), other); err != nil {
			t.Fatal(err)
		}
		ca, err := os.ReadFile(filepath.Join(dir, string(other), "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pem = append(pem, ca...)
	}
	if withTestCA {
		ca, err := os.ReadFile(filepath.Join(dataDir, "pki-v2", string(key), "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pem = append(pem, ca...)
	}
	path := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(path, pem, 0o600); err != nil {
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
		if got[c.side.String()+"/runtime_alloc_bytes_per_context"] <= 0 ||
			got[c.side.String()+"/runtime_allocations_per_context"] <= 0 || len(got) != 2 {
			t.Errorf("%s, heap: %v", c.scenario, got)
		}
	}
}

func TestAContextScenarioIsTakenInOneProcessUnderTimeAndHeapOnly(t *testing.T) {
	s, err := ParseScenario("context-client_1.3_x25519_ecdsa-p256_aes-128-gcm")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Measure{MeasureIo, MeasureRss} {
		if err := checkMeasure(m, s); err == nil || !isUnsupported(err) {
			t.Errorf("%s: %v", m, err)
		}
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

// The gate: the system store counts its roots, and a store without the test CA fails the sample.
func TestTheSystemTrustStoreCountsItsRootsAndMustVerifyTheTestCA(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	name := "context-client-system_1.3_x25519_ecdsa-p256_aes-128-gcm"
	args := []string{"sample", "--client", "go", "--server", "go", "--scenario", name, "--data-dir", dir,
		"--min-time-ms", "2", "--warmup-ms", "0"}
	// Go reads SSL_CERT_DIR's files too (/etc/ssl/certs by default): here, none.
	certDir := "SSL_CERT_DIR=" + t.TempDir()
	ok := runInFreshProcess(t, []string{"SSL_CERT_FILE=" + bundle(t, dir, ECDSAP256, true), certDir}, args...)
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
	if roots != 3 {
		t.Errorf("trust_roots %v, the bundle holds 3: %v", roots, ok)
	}
	failed := runInFreshProcess(t, []string{"SSL_CERT_FILE=" + bundle(t, dir, ECDSAP256, false), certDir}, args...)
	if failed["status"] != "failed" || !strings.Contains(failed["reason"].(string), "trust store gate") ||
		!strings.Contains(failed["reason"].(string), "unknown authority") {
		t.Errorf("without the test CA: %v", failed)
	}
}

func TestColdReportsEachSidesContextAndHandshakesFromAFreshProcess(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	env := []string{"SSL_CERT_FILE=" + bundle(t, dir, ECDSAP256, true)}
	for _, c := range []struct {
		scenario string
		resumes  bool
	}{
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", false},
		{"handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls", true},
		{"context-client-system_1.3_default_ecdsa-p256_default", false},
	} {
		reply := runInFreshProcess(t, env, "cold", "--client", "go", "--server", "go", "--scenario", c.scenario,
			"--data-dir", dir, "--spawned-at-ns", "1")
		cold, ok := reply["cold"].(map[string]any)
		if reply["status"] != "ok" || !ok || cold["process_start_ns"].(float64) <= 0 {
			t.Fatalf("%s: %v", c.scenario, reply)
		}
		fields := []string{"context_ns", "first_ns", "second_ns"}
		if c.resumes {
			fields = append(fields, "first_resume_ns", "second_resume_ns")
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
			"go: cold does not apply to transfer scenarios (it applies to: handshake-full, handshake-resume-ticket, " +
				"context-server, context-client, context-client-system)"},
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
