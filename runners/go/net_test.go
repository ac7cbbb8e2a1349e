package main

import (
	"encoding/json"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestPagesParseFromSizesAndWriteCounts(t *testing.T) {
	for text, want := range map[string]Page{
		"0": {}, "1KiB": {1, 1024}, "10KiB": {1, 10240}, "512KiB": {32, pageWriteSize},
		"100MiB": {6400, pageWriteSize}, "1000x64": {1000, 64}, "2x1K": {2, 1024},
	} {
		if got, err := parsePage(text); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", text, got, err, want)
		}
	}
	for text, reason := range map[string]string{
		"ten": "COUNTxBYTES", "20KiB": "multiple of 16 KiB", "5x0": "1 byte to 1 MiB", "3xZ": "COUNTxBYTES",
	} {
		if _, err := parsePage(text); err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want an error saying %q", text, err, reason)
		}
	}
	if chunk := (Page{1, 300}).chunk(); chunk[250] != 250 || chunk[251] != 0 || chunk[299] != 48 {
		t.Errorf("each write is the pattern i %% 251: %v", chunk[248:256])
	}
}

func TestTheNetworkModeRunsHandshakeScenariosOfThisStackOnly(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	full := "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"
	for _, c := range []struct {
		stack, scenario, status, reason string
	}{
		{"tcp", "", "failed", "plain TCP baselines (tcp, tcp-buffered) are served by the Rust runners"},
		{"tcp", full, "unsupported", "tcp is plain TCP"},
		{"go", "", "failed", "name its handshake with --scenario"},
		{"go", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "unsupported", "the network mode runs handshake scenarios"},
		{"go", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm", "unsupported", "no session-ID resumption"},
		{"openssl", full, "failed", "stack `openssl` is not in this runner (it has: go"},
	} {
		_, err := (&netArgs{stack: c.stack, scenario: c.scenario, dataDir: dir}).setup(Client)
		reply := netReplyOf(nil, err)
		if reply.Status != c.status || !strings.Contains(reply.Reason, c.reason) {
			t.Errorf("%s %s: %s %q, want %s with %q", c.stack, c.scenario, reply.Status, reply.Reason, c.status, c.reason)
		}
	}
}

// netPair serves the scenario with one worker on 127.0.0.1 and runs n connections of load
// against it, concurrency at a time, then stops the server: both reports.
func netPair(
	t *testing.T, scenario string, served Page, expected *Page, concurrency int, n uint64,
) (*netReport, *netReport) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // a P each for the server and the load
	s, err := ParseScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	args := &netArgs{stack: stackID, scenario: scenario, dataDir: testDataDir(t, s.Key)}
	serverPeer, err := args.setup(Server)
	if err != nil {
		t.Fatal(err)
	}
	clientPeer, err := args.setup(Client)
	if err != nil {
		t.Fatal(err)
	}
	fd, local, err := listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var stop atomic.Bool
	srv := &server{listener: fd, page: served, chunk: served.chunk(), ioTimeout: 2 * time.Second, stop: &stop, workers: 1}
	done := make(chan *netReport)
	go func() { done <- srv.serve(serverPeer) }()
	settings := loadSettings{
		connect: netip.MustParseAddrPort(local), connections: n, concurrency: concurrency, page: expected,
		ioTimeout: 2 * time.Second,
	}
	client := load(clientPeer, settings)
	stop.Store(true)
	return client, <-done
}

func TestServeAndLoadOverLoopbackNegotiateCountAndCheckEachConnection(t *testing.T) {
	page := Page{1, 10240}
	client, server := netPair(t, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", page, &page, 2, 20)
	if client.Failed+server.Failed != 0 {
		t.Fatalf("failures: client %v, server %v", client.Failures, server.Failures)
	}
	if client.Connections != 20 || server.Connections != 22 {
		t.Errorf("%d measured client connections (want 20), %d served (want the 2 of the warm-up too)",
			client.Connections, server.Connections)
	}
	for _, r := range []*netReport{client, server} {
		if r.Negotiated == nil || *r.Negotiated != "1.3 aes-128-gcm x25519" {
			t.Errorf("%s negotiated %v", r.Side, r.Negotiated)
		}
		if r.HandshakeLatency.total != r.Connections && r.Side == Client {
			t.Errorf("%s: %d handshake latencies for %d connections", r.Side, r.HandshakeLatency.total, r.Connections)
		}
		if r.Sockets.RecordsWritten < 2*r.Connections || r.Polls == 0 || r.Sockets.Reads < 2*r.Connections {
			t.Errorf("%s: implausible counts %+v, %d polls", r.Side, r.Sockets, r.Polls)
		}
	}
	// socket, setsockopt, connect, getsockopt, close; accept4, setsockopt, close.
	if client.Sockets.Other != 5*client.Connections || server.Sockets.Other != 3*server.Connections {
		t.Errorf("other syscalls: client %d, server %d", client.Sockets.Other, server.Sockets.Other)
	}
	if client.Sockets.BytesRead < 20*10240 || client.FirstByteLatency.total != 20 {
		t.Errorf("the client read %d bytes, %d first bytes", client.Sockets.BytesRead, client.FirstByteLatency.total)
	}
	if client.Sockets.Writes != 4*client.Connections {
		t.Errorf("a Go client writes its hello, its finished flight, the request and close_notify: "+
			"%d writes for %d connections",
			client.Sockets.Writes, client.Connections)
	}
	// The client's 2 at a time, and as many it has closed whose close the server has not read yet
	// (a loaded machine: 3 seen once).
	if server.RSSStartBytes == nil || server.RSSPeakBytes == nil || server.MaxOpen < 1 || server.MaxOpen > 4 {
		t.Errorf("server memory %v..%v, %d open at most", server.RSSStartBytes, server.RSSPeakBytes, server.MaxOpen)
	}
	if server.StartedUnix == 0 || server.EndedUnix < server.StartedUnix || client.EndedUnix <= client.StartedUnix {
		t.Errorf("windows: client %f..%f, server %f..%f",
			client.StartedUnix, client.EndedUnix, server.StartedUnix, server.EndedUnix)
	}
}

func TestAResumptionScenariosMeasuredConnectionsAllResume(t *testing.T) {
	for _, scenario := range []string{
		"handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
		"handshake-resume-ticket_1.2_secp256r1_ecdsa-p256_aes-256-gcm_mtls",
	} {
		client, server := netPair(t, scenario, Page{}, &Page{}, 2, 10)
		if client.Failed+server.Failed != 0 {
			t.Fatalf("%s: failures: client %v, server %v", scenario, client.Failures, server.Failures)
		}
		if client.Resumed != 10 || server.Resumed < 10 {
			t.Errorf("%s: %d of %d client connections resumed, %d of %d served",
				scenario, client.Resumed, client.Connections, server.Resumed, server.Connections)
		}
		if !strings.Contains(*client.Negotiated, "resumed") {
			t.Errorf("%s: the client negotiated %s", scenario, *client.Negotiated)
		}
	}
}

func TestAResponseOfAnotherLengthOrContentFailsEachConnectionWithItsReason(t *testing.T) {
	for _, c := range []struct {
		served Page
		reason string
	}{
		{Page{1, 1024}, "the response: gate failed: sent 10240 bytes, received 1024"},
		{Page{10, 1024},
			"the response: gate failed: received 10240 bytes whose content differs from the page's from byte 1024"},
	} {
		client, server := netPair(t, "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm", c.served, &Page{1, 10240}, 1, 3)
		want := []failure{{c.reason, 4}} // the warm-up's one and the 3 measured
		if client.Connections != 0 || !slices.Equal(client.Failures, want) || client.Failed != 4 {
			t.Errorf("%d connections, %d failed: %v; want %v", client.Connections, client.Failed, client.Failures, want)
		}
		if server.Failed != 0 {
			t.Errorf("the server's connections ended as the client dropped them, without failing: %v", server.Failures)
		}
	}
}

func TestTheReportHasTheHarnessFieldsAndNoOthers(t *testing.T) {
	page := Page{}
	client, _ := netPair(t, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", page, &page, 1, 2)
	line, err := json.Marshal(netReplyOf(client, nil))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	json.Unmarshal(line, &fields)
	want := []string{
		"status", "side", "stack", "library", "scenario", "page", "concurrency", "negotiated", "connections",
		"resumed", "failed", "failures", "started_unix", "ended_unix", "cpu_user_seconds", "cpu_system_seconds",
		"sockets", "polls", "handshake_latency", "first_byte_latency", "rss_start_bytes", "rss_peak_bytes", "max_open",
	}
	var got []string
	for k := range fields {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("fields %v, NetReport's %v", got, want)
	}
	if fields["status"] != "ok" || fields["side"] != "client" || fields["rss_peak_bytes"] != nil {
		t.Errorf("%s", line)
	}
}

func TestAClientThatStopsMidHandshakeTimesOutAndTheServerGoesOn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	scenario := "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"
	args := &netArgs{stack: stackID, scenario: scenario, dataDir: testDataDir(t, ECDSAP256)}
	serverPeer, _ := args.setup(Server)
	clientPeer, err := args.setup(Client)
	if err != nil {
		t.Fatal(err)
	}
	fd, local, err := listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var stop atomic.Bool
	srv := &server{listener: fd, ioTimeout: 200 * time.Millisecond, stop: &stop, workers: 1}
	done := make(chan *netReport)
	go func() { done <- srv.serve(serverPeer) }()
	// Three bytes of a record header: the server's handshake starts, reads them and waits.
	stalled, err := net.Dial("tcp", local)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.Write([]byte{22, 3, 1})
	time.Sleep(400 * time.Millisecond)
	settings := loadSettings{
		connect: netip.MustParseAddrPort(local), connections: 3, concurrency: 1, page: &Page{}, ioTimeout: time.Second,
	}
	client := load(clientPeer, settings)
	stop.Store(true)
	server := <-done
	want := []failure{{"the client sent nothing for 0.2 s during the handshake", 1}}
	if !slices.Equal(server.Failures, want) || server.Connections != 4 || client.Connections != 3 || client.Failed != 0 {
		t.Errorf("server: %d connections, failures %v (want %v); client: %d connections, failures %v",
			server.Connections, server.Failures, want, client.Connections, client.Failures)
	}
}
