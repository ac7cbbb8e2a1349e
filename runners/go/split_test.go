package main

import (
	"encoding/binary"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// socketPair is a connected pair of Unix sockets, as the orchestrator gives two runners.
func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "near"), os.NewFile(uintptr(fds[1]), "far")
}

func TestMessagesCrossTheSocketIntact(t *testing.T) {
	a, b := socketPair(t)
	defer b.Close()
	near, far := &relay{peer: a, side: Client}, &relay{peer: b, side: Server}
	var digest [32]byte
	for i := range digest {
		digest[i] = 0xa5
	}
	messages := []message{
		{tag: tagFlight, bytes: []byte("\x16\x03\x01 hello"), done: true, unread: 7},
		{tag: tagFlight, bytes: []byte{}, done: false, unread: 0},
		{tag: tagNext, next: nextMeasure},
		{tag: tagNext, next: nextStop},
		{tag: tagReached, reached: true},
		{tag: tagTally, count: 1 << 40, digest: digest},
		{tag: tagFlights, flights: [][]byte{[]byte("\x16\x03\x01"), {}, []byte("abc")}, done: true, unread: 3},
		{tag: tagFlights, flights: [][]byte{}, done: false},
	}
	for _, m := range messages {
		// Written from another goroutine: a socket buffer need not hold a whole message.
		sent := make(chan error, 1)
		go func() { sent <- near.send(m) }()
		got, err := far.recv()
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("sent %+v, received %+v, %v", m, got, err)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
	// The frames are the harness's, byte for byte: length, tag, then the fields.
	got := (message{tag: tagFlight, bytes: []byte("ab"), done: true, unread: 258}).encode()
	if string(got) != "\x00\x01\x02\x01\x00\x00ab" {
		t.Errorf("flight frame %q", got)
	}
	got = (message{tag: tagFlights, flights: [][]byte{[]byte("xyz")}, unread: 1}).encode()
	if string(got) != "\x05\x00\x01\x00\x00\x00\x03\x00\x00\x00xyz" {
		t.Errorf("flights frame %q", got)
	}
	if err := near.send(message{tag: tagAbort, reason: "gate failed: x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := far.recv(); err == nil || err.Error() != "the peer stopped: gate failed: x" {
		t.Errorf("abort: %v", err)
	}
	a.Close()
	if _, err := far.recv(); err == nil || !strings.HasPrefix(err.Error(), "the peer runner went away") {
		t.Errorf("closed: %v", err)
	}
}

func TestAGarbledTruncatedOrOversizedMessageIsAnErrorNamingWhatWasWrong(t *testing.T) {
	frame := func(body ...byte) []byte {
		return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	cases := []struct {
		raw  []byte
		want string
	}{
		// Text where a length should be ("HTTP" is 1.4 GB): refused before reading on.
		{[]byte("HTTP/1.1 200 OK"),
			"the peer runner announced a message of 1347703880 bytes, more than the 268435456 any message can be"},
		{append(binary.LittleEndian.AppendUint32(nil, 100), 1, 2, 3),
			"the peer runner went away in the middle of a message (3 of 100 bytes)"},
		{frame(9, 0), "the peer runner sent a garbled message (tag 9, 2 bytes)"},
		{frame(), "the peer runner sent a garbled message (tag none, 0 bytes)"},
		{frame(tagNext, 4), "the peer runner sent a garbled message (tag 1, 2 bytes)"},
		{frame(tagTally, 1, 2, 3), "the peer runner sent a garbled message (tag 3, 4 bytes)"},
		{frame(tagFlight, 1, 0), "the peer runner sent a garbled message (tag 0, 3 bytes)"},
		// A flight longer than what follows it.
		{frame(tagFlights, 1, 0, 0, 0, 0, 9, 0, 0, 0, 'a'), "the peer runner sent a garbled message (tag 5, 11 bytes)"},
		{[]byte{1, 0}, "the peer runner went away: unexpected EOF"},
	}
	for _, c := range cases {
		a, b := socketPair(t)
		if _, err := a.Write(c.raw); err != nil {
			t.Fatal(err)
		}
		a.Close()
		_, err := (&relay{peer: b, side: Server}).recv()
		b.Close()
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %q", c.raw, err, c.want)
		}
	}
}

// A whole split pair, both sides of Go in two "processes" (goroutines) joined by a socket,
// in the turns and messages any runner speaks: handshakes, resumption, a transfer's tally.
func TestASplitPairMeasuresBothSidesThroughTheRelay(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	for _, name := range []string{
		"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
		"handshake-resume-ticket_1.2_secp256r1_ecdsa-p256_chacha20-poly1305_mtls",
		"transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
	} {
		s, _ := ParseScenario(name)
		client, server := splitPairSample(t, dir, s, 1e6)
		if client.Iterations != server.Iterations || client.Iterations == 0 {
			t.Errorf("%s: iterations %d and %d", name, client.Iterations, server.Iterations)
		}
		if client.ClientLibrary != library() || client.ServerLibrary != "" || server.ServerLibrary != library() {
			t.Errorf("%s: libraries %q %q %q", name, client.ClientLibrary, client.ServerLibrary, server.ServerLibrary)
		}
		wantResumed := s.Kind.isResumption()
		for _, r := range []*SampleReport{client, server} {
			if len(r.Negotiated) != 1 || strings.Contains(r.Negotiated[0].Negotiated, "resumed") != wantResumed {
				t.Errorf("%s: negotiated %v", name, r.Negotiated)
			}
		}
	}
}

// One sample of scenario s by a split pair: both sides of Go, in goroutines joined by a socket,
// each measuring minTime ns; the client's and the server's reports.
func splitPairSample(t *testing.T, dir string, s Scenario, minTime time.Duration) (*SampleReport, *SampleReport) {
	t.Helper()
	return splitPair(t, dir, s, func(side Side, cr *credentials, peer *os.File) (*SampleReport, error) {
		return splitSample(side, s, cr, sampleSpec{minTime: minTime}, peer)
	})
}

// Both sides of a split pair, each run by side in a goroutine of its own, joined by a socket
// (the orchestrator's two processes); the client's and the server's reports.
func splitPair(t *testing.T, dir string, s Scenario,
	side func(Side, *credentials, *os.File) (*SampleReport, error)) (*SampleReport, *SampleReport) {
	t.Helper()
	cr, err := loadCredentials(dir, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	a, b := socketPair(t)
	defer a.Close()
	defer b.Close()
	type outcome struct {
		report *SampleReport
		err    error
	}
	server := make(chan outcome)
	go func() {
		r, err := side(Server, cr, b)
		server <- outcome{r, err}
	}()
	client, err := side(Client, cr, a)
	srv := <-server
	if err != nil || srv.err != nil {
		t.Fatalf("%s: client %v, server %v", s.Name(), err, srv.err)
	}
	return client, srv.report
}
