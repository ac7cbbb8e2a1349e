package main

// The runner at another Go release (scripts/build-go.sh, docs/versions.md): the stack it lists and
// answers to, its library string, and its peer checks.

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// atRelease makes this test's runner one built with -X main.release=RELEASE (and goroot).
func atRelease(t *testing.T, rel, root string) {
	t.Helper()
	oldRelease, oldRoot, oldID := release, goroot, stackID
	release, goroot, stackID = rel, root, idAt(rel)
	t.Cleanup(func() { release, goroot, stackID = oldRelease, oldRoot, oldID })
}

func TestTheStackIsGoOrGoAtItsRelease(t *testing.T) {
	if stackID != "go" || release != "" {
		t.Fatalf("a plain build is the stack go, not %s (release %q)", stackID, release)
	}
	for rel, want := range map[string]string{
		"": "go", "1.27": "go@1.27", "1.27-devel+abcdef1234": "go@1.27-devel+abcdef1234",
	} {
		if got := idAt(rel); got != want {
			t.Errorf("idAt(%q) = %s, want %s", rel, got, want)
		}
	}
}

func TestTheLibraryNamesTheReleaseAndALocalTreesPath(t *testing.T) {
	cases := []struct{ version, release, goroot, want string }{
		// The default runner, and a toolchain's (GOTOOLCHAIN): runtime.Version() alone.
		{"go1.26.8", "", "", "Go crypto/tls go1.26.8"},
		{"go1.27.3", "1.27", "", "Go crypto/tls go1.27.3"},
		// A local Go installation, labelled by its VERSION file.
		{"go1.26.8", "1.26.8", "/usr/local/go", "Go crypto/tls go1.26.8 (/usr/local/go)"},
		// A git checkout: the label has the commit, and the runtime's version is given too.
		{"go1.26.8", "1.26.8+0123456789", "/src/go", "Go crypto/tls go1.26.8+0123456789 (/src/go, go1.26.8)"},
		{"devel go1.27-abcdef1234 Mon Jan 5 10:00:00 2026 +0000", "1.27-devel+abcdef1234", "/src/go",
			"Go crypto/tls go1.27-devel+abcdef1234 (/src/go, devel go1.27-abcdef1234 Mon Jan 5 10:00:00 2026 +0000)"},
	}
	for _, c := range cases {
		if got := libraryOf(c.version, c.release, c.goroot); got != c.want {
			t.Errorf("libraryOf(%q, %q, %q) = %q, want %q", c.version, c.release, c.goroot, got, c.want)
		}
	}
}

func TestARunnerAtAReleaseListsAndAnswersOnlyToGoAtThatRelease(t *testing.T) {
	atRelease(t, "1.27", "")
	list, ok := run([]string{"list"}, io.Discard, false).(ListReply)
	if !ok || len(list.Stacks) != 1 || list.Stacks[0].ID != "go@1.27" {
		t.Fatalf("list: %+v", list)
	}
	if want := "Go crypto/tls " + runtime.Version(); list.Stacks[0].Library != want {
		t.Errorf("library %q, want %q", list.Stacks[0].Library, want)
	}
	dir := testDataDir(t, ECDSAP256)
	sample := func(client, server string) Reply {
		return run([]string{"sample", "--client", client, "--server", server, "--scenario",
			"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--min-time-ms", "2", "--warmup-ms", "1",
			"--data-dir", dir}, io.Discard, false).(Reply)
	}
	for _, pair := range [][2]string{{"go", "go@1.27"}, {"go@1.27", "go"}, {"go@1.26", "go@1.27"}} {
		r := sample(pair[0], pair[1])
		if r.Status != "failed" || !strings.Contains(r.Reason, "is not in this runner (it has: go@1.27)") {
			t.Errorf("%v: %+v", pair, r)
		}
	}
	if r := sample("go@1.27", "go@1.27"); r.Status != "ok" || r.ClientLibrary != list.Stacks[0].Library {
		t.Errorf("go@1.27 with itself: %s %s", r.Status, r.Reason)
	}
	net := run([]string{"load", "--stack", "go", "--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
		"--connect", "127.0.0.1:1", "--data-dir", dir}, io.Discard, false)
	if !strings.Contains(jsonString(t, net), "stack `go` is not in this runner (it has: go@1.27;") {
		t.Errorf("load --stack go: %s", jsonString(t, net))
	}
}

func jsonString(t *testing.T, reply any) string {
	t.Helper()
	line, err := jsonLine(reply)
	if err != nil {
		t.Fatal(err)
	}
	return string(line)
}

func TestAPeerAtAnotherReleaseIsItsStackForPeerChecks(t *testing.T) {
	for id, want := range map[string]string{"openssl@3.5": "openssl", "rustls-aws-lc-rs@0.23.20": "rustls-aws-lc-rs",
		"go@1.27-devel+abcdef1234": "go", "jsse": "jsse"} {
		if got := stackOf(id); got != want {
			t.Errorf("stackOf(%q) = %q, want %q", id, got, want)
		}
	}
	only := []string{"openssl", "rustls-aws-lc-rs"}
	caps := Capabilities{PeerLimits: []PeerLimit{{Side: Server, Only: only, Reason: "only those"}}}
	for _, peer := range []string{"openssl", "openssl@3.5", "rustls-aws-lc-rs@0.23.20"} {
		if err := caps.checkPeer(Server, peer); err != nil {
			t.Errorf("server with %s: %v", peer, err)
		}
	}
	for _, peer := range []string{"boringssl", "openssl-3.5", "rustls-ring@0.23.20"} {
		if err := caps.checkPeer(Server, peer); err == nil || err.Error() != "only those" {
			t.Errorf("server with %s: %v", peer, err)
		}
	}
	if err := caps.checkPeer(Client, "boringssl@1"); err != nil {
		t.Errorf("the client has no limit: %v", err)
	}
	if err := checkPeers(caps, "boringssl", "openssl@3.5"); err == nil {
		t.Error("checkPeers: the server's limit on its client")
	}
	// The stack declares no limits: every peer, at any release.
	if err := checkPeers(capabilities(), "rustls-aws-lc-rs@0.23.20", "openssl@3.5"); err != nil {
		t.Error(err)
	}
}
