package main

import (
	"crypto/tls"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func testPair(t *testing.T, name string, withLog bool) *pair {
	t.Helper()
	s, err := ParseScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := loadCredentials(testDataDir(t, s.Key), s.Key)
	if err != nil {
		t.Fatal(err)
	}
	return newPair(s, cr, withLog)
}

// A real handshake in one process: each side's view of what it negotiated, through the gates.
func TestInProcessHandshakesNegotiateWhatTheScenarioPins(t *testing.T) {
	cases := []struct {
		name           string
		client, server string
		resumed        bool
	}{
		{name: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
			client: "1.3 aes-128-gcm x25519", server: "1.3 aes-128-gcm x25519"},
		{name: "handshake-full_1.2_secp256r1_ecdsa-p384_chacha20-poly1305",
			client: "1.2 chacha20-poly1305 secp256r1", server: "1.2 chacha20-poly1305 secp256r1"},
		{name: "handshake-full_1.2_x25519_rsa-2048_aes-256-gcm_mtls",
			client: "1.2 aes-256-gcm x25519", server: "1.2 aes-256-gcm x25519"},
		{name: "handshake-full_1.3_x25519mlkem768_ed25519_aes-128-gcm_cert-requested",
			client: "1.3 aes-128-gcm x25519mlkem768", server: "1.3 aes-128-gcm x25519mlkem768"},
		{name: "handshake-resume-ticket_1.3_secp384r1_ecdsa-p256_aes-128-gcm_mtls", resumed: true,
			client: "1.3 aes-128-gcm secp384r1, resumed, ticket received", server: "1.3 aes-128-gcm secp384r1, resumed"},
		{name: "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm", resumed: true,
			client: "1.2 aes-128-gcm x25519, resumed, ticket received", server: "1.2 aes-128-gcm x25519, resumed"},
		// As shipped, Go 1.25's defaults: X25519MLKEM768 first, and AES-128-GCM with AES-GCM
		// instructions (ChaCha20-Poly1305 without).
		{name: "handshake-full_1.3_default_ecdsa-p256_default",
			client: "1.3 * x25519mlkem768", server: "1.3 * x25519mlkem768"},
	}
	for _, c := range cases {
		p := testPair(t, c.name, false)
		for i := range 3 {
			resumed := c.resumed && i > 0
			if err := p.checkedHandshake(&meter{}, resumed); err != nil {
				t.Fatalf("%s, handshake %d: %v", c.name, i, err)
			}
		}
		got := p.gates.list()
		for i, want := range []string{c.client, c.server} {
			if len(got) != 2 || !wildcardMatch(want, got[i].Negotiated) {
				t.Errorf("%s: negotiated %v, want %q", c.name, got, want)
			}
		}
	}
}

// The gates catch a config that does not do what the scenario asks.
func TestTheGatesCatchAConfigThatDoesNotMatchTheScenario(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(p *pair)
		want   string
	}{
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", func(p *pair) {
			p.configs[Client].tls.CurvePreferences = []tls.CurveID{tls.CurveP256}
			p.configs[Server].tls.CurvePreferences = []tls.CurveID{tls.CurveP256}
		}, "gate failed: client negotiated group secp256r1, the scenario asks for x25519"},
		{"handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", func(p *pair) {
			p.configs[Server].tls.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
			p.configs[Client].tls.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
		}, "gate failed: client negotiated cipher suite aes-256-gcm, the scenario asks for aes-128-gcm"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", func(p *pair) {
			p.configs[Server].tls.ClientAuth = tls.RequireAndVerifyClientCert
			p.configs[Server].tls.ClientCAs = p.configs[Client].tls.RootCAs
			p.configs[Client].tls.Certificates = p.configs[Server].tls.Certificates
		}, "server handshake failed: tls: failed to verify certificate"}, // a server certificate is no client certificate
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", func(p *pair) {
			p.configs[Client].tls.ServerName = "elsewhere.test"
		}, "client handshake failed: tls: failed to verify certificate"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", func(p *pair) {
			p.configs[Server].tls.SessionTicketsDisabled = false
			p.configs[Client].tls.SessionTicketsDisabled = false
			p.configs[Client].tls.ClientSessionCache = tls.NewLRUClientSessionCache(1)
		}, "gate failed: client resumed a session where a full handshake was asked"},
	}
	for _, c := range cases {
		p := testPair(t, c.name, false)
		c.tamper(p)
		var err error
		for range 2 {
			if err = p.checkedHandshake(&meter{}, false); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestATransferArrivesWholeAndIsTimedOnBothSides(t *testing.T) {
	for _, name := range []string{
		"transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.2_x25519_ecdsa-p256_chacha20-poly1305",
	} {
		p := testPair(t, name, false)
		report, err := timeSample(p, sampleSpec{minTime: time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if report.Iterations < transferMinWrites {
			t.Errorf("%s: %d writes", name, report.Iterations)
		}
		metrics := map[string]bool{}
		for _, v := range report.Values {
			// The collector may not have run (gc_percent 0); every rate is above 0.
			if (v.Value <= 0 && v.Metric != "gc_percent") || v.Value < 0 || v.Seconds <= 0 {
				t.Errorf("%s: %+v", name, v)
			}
			metrics[v.Side.String()+" "+v.Metric] = true
		}
		for _, m := range []string{"client mb_per_s", "server mb_per_s", "client cpu_mb_per_s", "server cpu_mb_per_s"} {
			if !metrics[m] {
				t.Errorf("%s: no %s in %v", name, m, report.Values)
			}
		}
	}
	// The length and digest gate catches a byte changed or missing, or records out of order,
	// with the split pair's SHA-256 and the local pair's CRC-32C alike.
	for name, newTally := range map[string]func() *tally{"SHA-256": newTally, "CRC-32C": newLocalTally} {
		of := func(records ...string) *tally {
			t := newTally()
			for _, record := range records {
				t.add([]byte(record))
			}
			return t
		}
		sent := of("abc")
		if err := checkTransfer(sent, of("abd")); err == nil || !strings.Contains(err.Error(), "digest differs") {
			t.Errorf("%s, changed byte: %v", name, err)
		}
		if err := checkTransfer(sent, of("ab")); err == nil || err.Error() != "gate failed: sent 3 bytes, received 2" {
			t.Errorf("%s, missing byte: %v", name, err)
		}
		sent = of("first record", "other record")
		swapped := of("other record", "first record")
		if err := checkTransfer(sent, swapped); err == nil || !strings.Contains(err.Error(), "digest differs") {
			t.Errorf("%s, records swapped: %v", name, err)
		}
		if err := checkTransfer(sent, of("first record", "other record")); err != nil {
			t.Errorf("%s, the same records: %v", name, err)
		}
	}
}

func TestHandshakeSamplesReportBothSidesRatesAndWhatWasNegotiated(t *testing.T) {
	p := testPair(t, "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", false)
	report, err := timeSample(p, sampleSpec{minTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := json.Marshal(replyOf(report, nil))
	for _, want := range []string{
		`{"status":"ok","client_library":"Go crypto/tls go`, `"metric":"handshakes_per_s"`, `"metric":"cpu_handshakes_per_s"`,
		`"negotiated":[{"side":"client","negotiated":"1.3 aes-128-gcm x25519, resumed, ticket received"},{"side":"server"`} {
		if !strings.Contains(string(reply), want) {
			t.Errorf("no %s in %s", want, reply)
		}
	}
	reply, _ = json.Marshal(replyOf(nil, unsupported("go: %s", "no")))
	if string(reply) != `{"status":"unsupported","reason":"go: no"}` {
		t.Errorf("%s", reply)
	}
}

// The heap measure charges each side what its calls allocate, and nothing of the harness's.
func TestHeapTalliesChargeEachSideItsOwnCallsOnly(t *testing.T) {
	tally := &heapTally{}
	m := &meter{heap: tally}
	for range 10 {
		m.call(Client, func() {})
	}
	var sink []byte
	m.call(Server, func() { sink = make([]byte, 1000) })
	_ = sink
	if tally.objects[Client] != 0 || tally.bytes[Client] != 0 || tally.objects[Server] != 1 || tally.bytes[Server] < 1000 {
		t.Errorf("objects %v, bytes %v", tally.objects, tally.bytes)
	}
	report, err := heapSample(testPair(t, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range report.Values {
		if v.Value < 10 {
			t.Errorf("%+v", v)
		}
	}
	if len(report.Values) != 4 {
		t.Errorf("%v", report.Values)
	}
}

// A panic inside a handshake's coroutine comes out of the call that resumed it, where run's
// recover turns it into a failed reply.
func TestAPanicInAHandshakeComesOutOfTheCallThatResumedIt(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic")
		}
	}()
	newHandshaker().step(nil) // Handshake on a nil *tls.Conn
}

// A clock whose regions counted no more than reading the CPU clock costs gives no CPU figure,
// rather than a rate of a billion calls a second that nothing measured.
func TestAClockThatCountedOnlyItsOwnCostGivesNoCPUFigure(t *testing.T) {
	short := clock{cpu: cpuOverhead() * 10, regions: 10}
	if seconds, ok := short.cpuSeconds(); ok {
		t.Errorf("CPU seconds %g from regions that counted only the clock's own cost", seconds)
	}
	timed := clock{elapsed: 20 * time.Millisecond, cpu: cpuOverhead() * 10, regions: 10}
	for _, v := range sideValues(Client, HandshakeFull, 40, &timed) {
		if v.Metric == "cpu_handshakes_per_s" {
			t.Errorf("a CPU rate without a CPU figure: %+v", v)
		}
	}
	long := clock{cpu: cpuOverhead()*10 + 5*time.Millisecond, regions: 10}
	if seconds, ok := long.cpuSeconds(); !ok || seconds != 0.005 {
		t.Errorf("CPU seconds %g, %v; want 0.005 (the regions less the clock's cost)", seconds, ok)
	}
}
