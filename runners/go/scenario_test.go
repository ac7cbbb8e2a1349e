package main

import (
	"crypto/fips140"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestScenarioNamesParseAndRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		want Scenario
	}{
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
			Scenario{Kind: HandshakeFull, Version: TLS13, Pinned: true, Group: X25519, Key: ECDSAP256, Suite: AES128GCM,
				ClientAuth: AuthNone, EMS: true}},
		{"handshake-resume-ticket_1.2_secp384r1_rsa-2048_chacha20-poly1305_mtls_no-ems",
			Scenario{Kind: HandshakeResumeTicket, Version: TLS12, Pinned: true, Group: Secp384r1, Key: RSA2048,
				Suite: ChaCha20Poly1305, ClientAuth: AuthRequired}},
		{"handshake-resume-id_1.2_secp256r1_ed25519_aes-256-gcm_cert-requested",
			Scenario{Kind: HandshakeResumeID, Version: TLS12, Pinned: true, Group: Secp256r1, Key: Ed25519, Suite: AES256GCM,
				ClientAuth: AuthRequested, EMS: true}},
		{"transfer_1.3_x25519mlkem768_rsa-4096_aes-128-gcm",
			Scenario{Kind: Transfer, Version: TLS13, Pinned: true, Group: X25519MLKEM768, Key: RSA4096, Suite: AES128GCM,
				ClientAuth: AuthNone, EMS: true}},
		{"io-profile_1.3_default_ecdsa-p256_default_mtls",
			Scenario{Kind: IoProfile, Version: TLS13, Key: ECDSAP256, ClientAuth: AuthRequired, EMS: true}},
		{"memory-10000_1.2_x25519_ecdsa-p384_aes-128-gcm",
			Scenario{Kind: Memory10000, Version: TLS12, Pinned: true, Group: X25519, Key: ECDSAP384, Suite: AES128GCM,
				ClientAuth: AuthNone, EMS: true}},
	}
	for _, c := range cases {
		got, err := ParseScenario(c.name)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
		if got.Name() != c.name {
			t.Errorf("%s: named back as %s", c.name, got.Name())
		}
	}
}

func TestABadScenarioNameSaysWhatIsValid(t *testing.T) {
	cases := []struct{ name, err string }{
		{"handshake-full_1.4_x25519_ecdsa-p256_aes-128-gcm", "unknown protocol version `1.4` (valid: 1.2, 1.3)"},
		{"handshake", "scenario `handshake` is not of the form kind_version_group_key_suite"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems",
			"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems: EMS is TLS 1.2 only"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_psk",
			"unknown suffix `psk` (valid: mtls, cert-requested, no-ems)"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems_mtls", "unknown suffix `no-ems`"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_none", "unknown suffix `none`"},
		{"handshake-resume-id_1.3_x25519_ecdsa-p256_aes-128-gcm", "session-ID resumption exists in TLS 1.2 only"},
		{"handshake-full_1.2_x25519mlkem768_ecdsa-p256_aes-128-gcm", "x25519mlkem768 exists in TLS 1.3 only"},
		{"handshake-full_1.3_default_ecdsa-p256_aes-128-gcm", "group and suite are either both `default`"},
		{"handshake-resume-ticket_1.3_default_ecdsa-p256_default", "resumption is measured pinned only"},
		{"handshake-full_1.3_x25519_dsa-1024_aes-128-gcm", "unknown key type `dsa-1024`"},
		{"handshake-full_1.3_x448_ecdsa-p256_aes-128-gcm", "unknown key-exchange group `x448`"},
	}
	for _, c := range cases {
		if _, err := ParseScenario(c.name); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.err)
		}
	}
}

func TestGroupsAddTheECDSACurveInTLS12ForTheSideThatVerifiesACertificate(t *testing.T) {
	cases := []struct {
		name string
		side Side
		want []Group
	}{
		{"handshake-full_1.2_x25519_ecdsa-p384_aes-128-gcm", Client, []Group{X25519, Secp384r1}},
		{"handshake-full_1.2_x25519_ecdsa-p384_aes-128-gcm", Server, []Group{X25519}},
		{"handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls", Server, []Group{X25519, Secp256r1}},
		{"handshake-full_1.3_x25519_ecdsa-p384_aes-128-gcm_mtls", Client, []Group{X25519}},
		{"handshake-full_1.2_secp256r1_ecdsa-p256_aes-128-gcm", Client, []Group{Secp256r1}},
		{"handshake-full_1.2_x25519_ed25519_aes-128-gcm", Client, []Group{X25519}},
		{"handshake-full_1.3_default_ed25519_default", Client, nil},
	}
	for _, c := range cases {
		s, err := ParseScenario(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.groups(c.side); !slices.Equal(got, c.want) {
			t.Errorf("%s %s: %v, want %v", c.name, c.side, got, c.want)
		}
	}
}

func TestCapabilitiesNameTheirReasonsFirst(t *testing.T) {
	caps := capabilities()
	cases := []struct{ name, reason string }{
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", ""},
		{"handshake-full_1.2_x25519_rsa-2048_chacha20-poly1305_mtls", ""},
		{"handshake-resume-ticket_1.3_x25519mlkem768_ed25519_aes-128-gcm_cert-requested", ""},
		{"io-profile_1.3_default_ecdsa-p256_default", ""},
		{"handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm", "go: crypto/tls has no session-ID resumption"},
		{"handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems", "cannot be switched off"},
		{"memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm", ""},
		{"memory-1000_1.3_x25519_ecdsa-p256_aes-256-gcm", "no setting for TLS 1.3 suites"},
		{"transfer_1.3_x25519_ecdsa-p256_chacha20-poly1305", "no setting for TLS 1.3 suites"},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm_mtls", "no setting for TLS 1.3 suites"},
		{"handshake-full_1.2_x25519_ecdsa-p256_aes-256-gcm", ""},
		{"handshake-full_1.2_secp384r1_ecdsa-p256_aes-128-gcm_mtls", "lists it before P-384"},
		{"handshake-full_1.2_secp384r1_ecdsa-p256_aes-128-gcm", ""},
	}
	for _, c := range cases {
		s, err := ParseScenario(c.name)
		if err != nil {
			t.Fatal(err)
		}
		err = caps.check(s)
		var unsup errUnsupported
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.reason != "" && (!errors.As(err, &unsup) || !strings.Contains(unsup.reason, c.reason)):
			t.Errorf("%s: got %v, want unsupported with %q", c.name, err, c.reason)
		}
	}
	for _, m := range []Measure{MeasureInstructions, MeasureSync} {
		if err := caps.checkMeasure(m); err == nil {
			t.Errorf("measure %s: no limit declared", m)
		}
	}
	for _, m := range []Measure{MeasureNet, MeasureRss, MeasureHeap} {
		if err := caps.checkMeasure(m); err != nil {
			t.Errorf("measure %s: %v", m, err)
		}
	}
	err := checkMeasure(MeasureIo, Scenario{Kind: Transfer})
	if err == nil || !strings.Contains(err.Error(), "measure io does not apply to transfer scenarios") {
		t.Errorf("io on transfer: %v", err)
	}
}

func TestWildcardsMatchAnyTextIncludingNone(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{"a*c", "abc", true}, {"a*c", "ac", true}, {"*", "", true},
		{"*_1.2_x25519_ecdsa-*_aes-256-gcm*", "transfer_1.2_x25519_ecdsa-p256_aes-256-gcm", true},
		{"*_1.2_x25519_ecdsa-*_aes-256-gcm*", "transfer_1.2_x25519_rsa-2048_aes-256-gcm", false},
		{"abc", "abcd", false}, {"a*d", "abc", false},
	}
	for _, c := range cases {
		if got := wildcardMatch(c.pattern, c.text); got != c.want {
			t.Errorf("%q ~ %q: %v", c.pattern, c.text, got)
		}
	}
}

func TestTheBackendIsGoCryptoWithItsFIPSMode(t *testing.T) {
	b := backend()
	if b.Name != "Go crypto" || b.Version != runtime.Version() {
		t.Fatalf("backend %+v", b)
	}
	want := "FIPS 140-3 mode off"
	if fips140.Enabled() {
		want = "FIPS 140-3 mode on"
	}
	if !strings.HasPrefix(b.Detail, want) {
		t.Fatalf("backend detail %q, want it to start with %q", b.Detail, want)
	}
}
