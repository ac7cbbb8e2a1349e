package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sessionReply is a reply line as the orchestrator reads it.
type sessionReply struct {
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Cause      string `json:"cause"`
	Iterations uint64 `json:"iterations"`
	Values     []struct {
		Side, Metric   string
		Value, Seconds float64
	} `json:"values"`
	Negotiated []struct{ Side, Negotiated string } `json:"negotiated"`
}

// requestLine is a request line: the words of a command line, tab-separated.
func requestLine(words ...string) string { return strings.Join(words, "\t") + "\n" }

// runSession runs a session over the given request lines and returns its reply lines.
func runSession(t *testing.T, requests string) []sessionReply {
	t.Helper()
	var out bytes.Buffer
	if err := session(strings.NewReader(requests), &out); err != nil {
		t.Fatal(err)
	}
	return decodeReplies(t, out.String())
}

func decodeReplies(t *testing.T, out string) []sessionReply {
	t.Helper()
	var replies []sessionReply
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("a reply without its newline: %q", line)
		}
		var r sessionReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		replies = append(replies, r)
	}
	return replies
}

func (r sessionReply) value(side, metric string) (float64, bool) {
	for _, v := range r.Values {
		if v.Side == side && v.Metric == metric {
			return v.Value, true
		}
	}
	return 0, false
}

// One process, sample after sample: each request is answered on its own line, as the one-shot
// command would answer it, and a request the session does not take fails without ending it.
func TestASessionAnswersEachRequestOnItsOwnLine(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	timed := func(scenario string) string {
		return requestLine("sample", "--client", "go", "--server", "go", "--scenario", scenario,
			"--min-time-ms", "2", "--warmup-ms", "1", "--data-dir", dir)
	}
	requests := timed("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm") +
		requestLine("list") +
		timed("handshake-resume-ticket_1.2_secp256r1_ecdsa-p256_aes-128-gcm") +
		"\n" +
		requestLine("sample", "--measure", "io", "--client", "go", "--server", "go",
			"--scenario", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir) +
		requestLine("sample", "--client", "go", "--bogus", "1") +
		requestLine("serve", "--stack", "go") +
		// The last line may lack its newline. A full handshake after a resumed one: no session
		// cache or ticket of the sample before is left to resume.
		strings.TrimSuffix(timed("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"), "\n")
	replies := runSession(t, requests)
	if len(replies) != 8 {
		t.Fatalf("%d replies to 8 requests: %+v", len(replies), replies)
	}
	negotiated := map[int]string{
		0: "1.3 aes-128-gcm x25519",
		2: "1.2 aes-128-gcm secp256r1, resumed, ticket received",
		7: "1.3 aes-128-gcm x25519",
	}
	for i, want := range negotiated {
		r := replies[i]
		if r.Status != "ok" || r.Iterations == 0 {
			t.Fatalf("reply %d: %+v", i, r)
		}
		for _, side := range []string{"client", "server"} {
			rate, ok := r.value(side, "handshakes_per_s")
			if !ok || rate <= 0 {
				t.Errorf("reply %d: %s handshakes_per_s in %+v", i, side, r.Values)
			}
			for _, v := range r.Values {
				if v.Side == side && v.Metric == "handshakes_per_s" && v.Seconds < 0.002 {
					t.Errorf("reply %d: %s measured %g s, under --min-time-ms", i, side, v.Seconds)
				}
			}
		}
		if len(r.Negotiated) != 2 || r.Negotiated[0].Side != "client" || r.Negotiated[0].Negotiated != want ||
			!strings.HasPrefix(r.Negotiated[1].Negotiated, strings.TrimSuffix(want, ", ticket received")) {
			t.Errorf("reply %d: negotiated %+v, want %q", i, r.Negotiated, want)
		}
	}
	if io := replies[4]; io.Status != "ok" || io.Iterations != 1 || len(io.Negotiated) != 2 {
		t.Errorf("io: %+v", io)
	} else {
		for _, side := range []string{"client", "server"} {
			if n, ok := io.value(side, "records_written"); !ok || n < 3 {
				t.Errorf("io: %s records_written %g in %+v", side, n, io.Values)
			}
		}
	}
	failures := map[int]string{
		1: "a session takes sample and side requests (got `list`)",
		3: "a session takes sample and side requests (got ``)",
		5: "sample: flag provided but not defined: -bogus",
		6: "a session takes sample and side requests (got `serve`)",
	}
	for i, want := range failures {
		if r := replies[i]; r.Status != "failed" || r.Reason != want {
			t.Errorf("reply %d: %+v, want failed with %q", i, r, want)
		}
	}
	// Nothing but the end of stdin ends a session: no request, no reply.
	if replies := runSession(t, ""); len(replies) != 0 {
		t.Errorf("%+v", replies)
	}
}

// A split pair in two sessions (goroutines here, processes in a run), twice, each sample
// meeting its peer at a new socket path, the second one over a stale file left there.
// A session's process outlives its samples, so a sample must end everything it started: each
// config's handshake coroutine once stayed parked, and a warm process's collector scanned more
// goroutines with every sample (stack.go, sideConfig.close).
func TestASessionsSamplesLeaveNoGoroutineBehind(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	request := func(measure, scenario string) string {
		return requestLine("sample", "--measure", measure, "--client", "go", "--server", "go", "--scenario", scenario,
			"--min-time-ms", "2", "--warmup-ms", "1", "--data-dir", dir)
	}
	requests := request("time", "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm") +
		request("time", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm") +
		request("io", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm") +
		request("heap", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm")
	runSession(t, requests) // the runtime's own goroutines that a first sample starts
	before := runtime.NumGoroutine()
	for _, r := range runSession(t, strings.Repeat(requests, 5)) {
		if r.Status != "ok" {
			t.Fatalf("a sample failed: %+v", r)
		}
	}
	// A finished coroutine's goroutine exits when its owner stops it; give it a moment to.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("20 samples left %d goroutines behind", after-before)
	}
}

func TestSplitPairsInSessionsMeetAtAPeerSocketEachSample(t *testing.T) {
	dataDir := testDataDir(t, ECDSAP256)
	sockets, err := os.MkdirTemp("", "tlsbench-peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockets)
	paths := []string{filepath.Join(sockets, "1.sock"), filepath.Join(sockets, "2.sock")}
	if err := os.WriteFile(paths[1], []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	scenarios := []string{
		"handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
	}
	requests := func(role string) string {
		var lines string
		for i, path := range paths {
			lines += requestLine("side", "--role", role, "--stack", "go", "--peer-stack", "go", "--peer-socket", path,
				"--scenario", scenarios[i], "--min-time-ms", "1", "--warmup-ms", "0", "--data-dir", dataDir)
		}
		// A third sample that the server cannot take: it meets the client, fails and closes
		// the socket, so the client fails at once rather than wait, and both sessions go on.
		stack := "go"
		if role == "server" {
			stack = "nope"
		}
		return lines + requestLine("side", "--role", role, "--stack", stack, "--peer-stack", "go",
			"--peer-socket", filepath.Join(sockets, "3.sock"),
			"--scenario", scenarios[0], "--min-time-ms", "1", "--warmup-ms", "0", "--data-dir", dataDir)
	}
	type outcome struct {
		out string
		err error
	}
	server := make(chan outcome)
	go func() {
		var out bytes.Buffer
		err := session(strings.NewReader(requests("server")), &out)
		server <- outcome{out.String(), err}
	}()
	var out bytes.Buffer
	if err := session(strings.NewReader(requests("client")), &out); err != nil {
		t.Fatal(err)
	}
	srv := <-server
	if srv.err != nil {
		t.Fatal(srv.err)
	}
	clients, servers := decodeReplies(t, out.String()), decodeReplies(t, srv.out)
	if len(clients) != 3 || len(servers) != 3 {
		t.Fatalf("client replies %+v, server replies %+v", clients, servers)
	}
	for i := range 2 {
		c, s := clients[i], servers[i]
		if c.Status != "ok" || s.Status != "ok" || c.Iterations == 0 || c.Iterations != s.Iterations {
			t.Errorf("sample %d: client %+v, server %+v", i, c, s)
			continue
		}
		if _, ok := c.value("client", "handshakes_per_s"); !ok {
			t.Errorf("sample %d: client values %+v", i, c.Values)
		}
		if _, ok := s.value("server", "handshakes_per_s"); !ok {
			t.Errorf("sample %d: server values %+v", i, s.Values)
		}
		resumed := i == 0
		for _, r := range []sessionReply{c, s} {
			if len(r.Negotiated) != 1 || strings.Contains(r.Negotiated[0].Negotiated, "resumed") != resumed {
				t.Errorf("sample %d: negotiated %+v", i, r.Negotiated)
			}
		}
	}
	// The client's failure echoes the server's, and says so; the server's is its own.
	if c, s := clients[2], servers[2]; c.Status != "failed" || !strings.HasPrefix(c.Reason, "the peer runner went away") ||
		c.Cause != "peer" || s.Status != "failed" || s.Reason != "stack `nope` is not in this runner (it has: go)" ||
		s.Cause != "" {
		t.Errorf("sample 2: client %+v, server %+v", c, s)
	}
	for _, path := range append(paths, filepath.Join(sockets, "3.sock")) {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s is left behind: %v", path, err)
		}
	}
}

// side takes exactly one of the two ways to its peer, in a session only the socket, and a
// peer that never comes fails the side once peerWait has passed.
func TestASideWithoutItsPeerFailsSayingWhy(t *testing.T) {
	dataDir := testDataDir(t, ECDSAP256)
	sockets, err := os.MkdirTemp("", "tlsbench-peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockets)
	defer func(wait time.Duration) { peerWait = wait }(peerWait)
	peerWait = 50 * time.Millisecond
	side := func(role string, peer ...string) []string {
		return append([]string{"side", "--role", role, "--stack", "go", "--peer-stack", "go",
			"--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dataDir}, peer...)
	}
	missing, stale := filepath.Join(sockets, "missing.sock"), filepath.Join(sockets, "stale.sock")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	exactlyOne := "side: give exactly one of --peer-fd and --peer-socket"
	inSession := "in a session the peer is reached with --peer-socket PATH, not --peer-fd"
	cases := []struct {
		args      []string
		inSession bool
		want      string
	}{
		{side("client"), false, exactlyOne},
		{side("client", "--peer-fd", "0", "--peer-socket", missing), false, exactlyOne},
		{side("client", "--peer-fd", "0"), true, inSession},
		{side("server", "--peer-fd", "0", "--peer-socket", missing), true, inSession},
		{side("client", "--peer-socket", missing), true,
			"cannot connect to the peer at " + missing + ": no such file or directory"},
		{side("client", "--peer-socket", stale), false, "cannot connect to the peer at " + stale + ": connection refused"},
		{side("server", "--peer-socket", stale), true, "no peer connected to " + stale + " within 0.05 s"},
	}
	for _, c := range cases {
		started := time.Now()
		r, ok := run(c.args, nil, c.inSession).(Reply)
		if !ok || r.Status != "failed" || r.Reason != c.want {
			t.Errorf("%q: %+v, want failed with %q", c.args[1:], r, c.want)
		}
		if waited := time.Since(started); waited > 5*time.Second {
			t.Errorf("%q: waited %v", c.args[1:], waited)
		}
	}
	// The server took the stale file's place and left nothing behind.
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s: %v", stale, err)
	}
	// In a session the failure is a reply like another, and the next request is answered.
	replies := runSession(t, requestLine(side("client", "--peer-fd", "0")...)+
		requestLine("sample", "--client", "go", "--server", "go",
			"--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
			"--min-time-ms", "1", "--warmup-ms", "0", "--data-dir", dataDir))
	if len(replies) != 2 || replies[0].Status != "failed" || replies[1].Status != "ok" {
		t.Errorf("%+v", replies)
	}
}
