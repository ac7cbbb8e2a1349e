package main

// The context scenarios (context-server, context-client, context-client-system): one operation
// is building one side's tls.Config and dropping it, its files read and parsed each time, as a
// process that makes a config pays (docs/runner-protocol.md). Only that side is measured; after
// the measured loop, one handshake from the last config built, against the scenario's other
// side, must verify (the gate: nothing is measured that did not load).

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"
)

// contextBuilder builds one side's config of a scenario from the data directory's files.
type contextBuilder struct {
	scenario Scenario
	side     Side
	dir      string
	// roots is the client's last trust store (trust_roots counts it).
	roots *x509.CertPool
}

func newContextBuilder(side Side, s Scenario, dataDir string) *contextBuilder {
	return &contextBuilder{scenario: s, side: side, dir: filepath.Join(dataDir, "pki-v2", string(s.Key))}
}

// systemTrust: the client's context trusts the system's store, as Go's users load it.
func (b *contextBuilder) systemTrust() bool {
	return b.side == Client && b.scenario.Kind == ContextClientSystem
}

// read is one file of the key type's directory, a missing one named by its path.
func (b *contextBuilder) read(name string) ([]byte, error) {
	return readPKIFile(filepath.Join(b.dir, name))
}

func (b *contextBuilder) keyPair(chain, key string) (tls.Certificate, error) {
	chainPEM, err := b.read(chain)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := b.read(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(chainPEM, keyPEM)
	if err != nil {
		return cert, fmt.Errorf("%s, %s: %w", filepath.Join(b.dir, chain), key, err)
	}
	return cert, nil
}

// testRoots is a pool of the one test CA (ca.pem).
func (b *contextBuilder) testRoots() (*x509.CertPool, error) {
	caPEM, err := b.read("ca.pem")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no certificate", filepath.Join(b.dir, "ca.pem"))
	}
	return pool, nil
}

// build reads and parses the side's files and makes its config, as newConfig does for a
// handshake: the server's chain and key (and the CA that verifies client certificates where
// the scenario asks for them); the client's trust store (the test CA, or the system's through
// x509.SystemCertPool, which honours SSL_CERT_FILE) and its chain and key under mTLS.
func (b *contextBuilder) build() (*tls.Config, *ticketCache, error) {
	var cr credentials
	var err error
	if b.side == Server {
		if cr.server, err = b.keyPair("chain.pem", "server.key"); err != nil {
			return nil, nil, err
		}
		if b.scenario.ClientAuth != AuthNone {
			if cr.roots, err = b.testRoots(); err != nil {
				return nil, nil, err
			}
		}
	} else {
		if b.systemTrust() {
			// Go loads the system's roots on the first call in a process and hands out a copy
			// of that pool from then on.
			if cr.roots, err = x509.SystemCertPool(); err != nil {
				return nil, nil, fmt.Errorf("x509.SystemCertPool: %w", err)
			}
		} else if cr.roots, err = b.testRoots(); err != nil {
			return nil, nil, err
		}
		if b.scenario.ClientAuth == AuthRequired {
			if cr.client, err = b.keyPair("client-chain.pem", "client.key"); err != nil {
				return nil, nil, err
			}
		}
	}
	b.roots = cr.roots
	config, cache := tlsConfig(b.side, handshakeOf(b.scenario), &cr)
	return config, cache, nil
}

// trustRoots is the number of roots the client's last store holds (Subjects lists a pool's
// certificates; on Linux the system pool is a plain pool of the bundle's roots).
func (b *contextBuilder) trustRoots() int {
	if b.roots == nil {
		return 0
	}
	//lint:ignore SA1019 the count of roots loaded is what the trust store gate checks
	return len(b.roots.Subjects())
}

// certFileVar is where the orchestrator points the runner at the system's bundle with the test
// CA appended (DATA_DIR/pki-v2/KEY/system-bundle.pem); x509.SystemCertPool reads it.
const certFileVar = "SSL_CERT_FILE"

// minTrustRoots: Debian's bundle holds about 140 roots, so fewer means the store loaded was not
// the system's (protocol.rs, MIN_TRUST_ROOTS).
const minTrustRoots = 100

// rssContexts is how many contexts the rss measure builds and holds (context.rs, RSS_CONTEXTS).
const rssContexts = 100

// contextSample measures one context scenario under the time, heap or rss measure, in this process.
func contextSample(s Scenario, measure Measure, dataDir string, spec sampleSpec) (*SampleReport, error) {
	side := s.Kind.contextSide()
	if s.Kind == ContextClientSystem {
		if info, err := os.Stat(os.Getenv(certFileVar)); err != nil || !info.Mode().IsRegular() {
			return nil, fmt.Errorf("context-client-system needs %s: the system's bundle with the test CA appended "+
				"(tlsbench writes it as DATA_DIR/pki-v2/KEY/system-bundle.pem and sets the variable)", certFileVar)
		}
	}
	b := newContextBuilder(side, s, dataDir)
	var config *tls.Config
	var cache *ticketCache
	var err error
	build := func() { config, cache, err = b.build() }
	// The first build unmeasured: a process's first context pays for the library's
	// initialisation, and it loads Go's system pool, which later builds copy (the cold command
	// measures that first call).
	if build(); err != nil {
		return nil, failed(side, "context", err)
	}
	var iterations uint64
	var values []MetricValue
	var gc *gcWindow
	switch measure {
	case MeasureTime:
		for started := time.Now(); spec.warming(started); {
			if build(); err != nil {
				return nil, failed(side, "context", err)
			}
		}
		c := &clock{}
		gc = newGCWindow()
		gc.begin()
		for !spec.done(iterations, 0, spec.reached(c)) {
			if c.time(build); err != nil {
				return nil, failed(side, "context", err)
			}
			iterations++
		}
		gc.end()
		values = append(sideValues(side, s.Kind, iterations, c), gcValues(gc.report, side)...)
	case MeasureHeap:
		tally := &heapTally{}
		for range heapHandshakes {
			if tally.call(side, build); err != nil {
				return nil, failed(side, "context", err)
			}
		}
		iterations = heapHandshakes
		values = []MetricValue{{Side: side, Metric: "runtime_alloc_bytes_per_context",
			Value: float64(tally.bytes[side]) / heapHandshakes}}
	case MeasureRss:
		grown, rssErr := heldContexts(func() (any, error) {
			if build(); err != nil {
				return nil, failed(side, "context", err)
			}
			return config, nil
		})
		if rssErr != nil {
			return nil, rssErr
		}
		iterations = rssContexts
		values = []MetricValue{{Side: side, Metric: "rss_context_bytes", Value: grown / rssContexts}}
	default:
		return nil, unsupported("measure %s is not taken by sample", measure)
	}
	g, err := verifyContext(s, dataDir, side, &sideConfig{side: side, tls: config, cache: cache, hs: newHandshaker()})
	if err != nil {
		return nil, err
	}
	if b.systemTrust() {
		roots := b.trustRoots()
		if roots < minTrustRoots {
			return nil, gateFailed("the system's trust store held %d roots (fewer than %d): is %s read?",
				roots, minTrustRoots, certFileVar)
		}
		values = append(values, MetricValue{Side: side, Metric: "trust_roots", Value: float64(roots)})
	}
	report := &SampleReport{ClientLibrary: library(), ServerLibrary: library(), Iterations: iterations,
		Values: values, Negotiated: g.list()}
	if gc != nil {
		report.GCReport = gc.report
	}
	return report, nil
}

// heldContexts builds rssContexts contexts and holds them: the growth of the process's peak
// resident size from a full collection that gives back what the heap does not hold. As with
// memory-N's rss, the peak includes the garbage the builds left for a collection that had not
// come yet (Go's heap grows to twice its live size before it collects): what a process pays.
func heldContexts(build func() (any, error)) (float64, error) {
	held := make([]any, 0, rssContexts)
	debug.FreeOSMemory()
	before, err := resetPeakRSS()
	if err != nil {
		return 0, err
	}
	for range rssContexts {
		config, err := build()
		if err != nil {
			return 0, err
		}
		held = append(held, config)
	}
	peak, err := statusField("VmHWM")
	if err != nil {
		return 0, err
	}
	runtime.KeepAlive(held)
	return grew(peak, before), nil
}

// handshakeOf is the handshake whose contexts a context scenario builds: a full one, with the
// name's other parts. A handshake scenario is its own.
func handshakeOf(s Scenario) Scenario {
	if s.Kind.isContext() {
		s.Kind = HandshakeFull
	}
	return s
}

// verifyContext makes one full handshake with built (the side's last config) against a fresh
// config of the other side, with handshake-full's gates: a client's store that lacks the test CA
// fails here.
func verifyContext(s Scenario, dataDir string, side Side, built *sideConfig) (*gates, error) {
	handshake := handshakeOf(s)
	cr, err := loadCredentials(dataDir, s.Key)
	if err != nil {
		return nil, err
	}
	p := &pair{scenario: handshake, link: newLink(false)}
	p.configs[side] = built
	p.configs[side.peer()] = newConfig(side.peer(), handshake, cr)
	defer p.close()
	if err := p.checkedHandshake(&meter{}, false); err != nil {
		return nil, gateFailed("the handshake (%s) from the last context built did not complete: %v",
			handshake, trustHint(s, err))
	}
	return &p.gates, nil
}

// trustHint adds to a context-client-system handshake's failure where the store comes from.
func trustHint(s Scenario, err error) error {
	if s.Kind != ContextClientSystem {
		return err
	}
	return fmt.Errorf("%w (the client's system store must verify the test CA's chain; %s=%q)",
		err, certFileVar, os.Getenv(certFileVar))
}
