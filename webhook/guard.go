package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/credohq/credo/internal/tracing"
)

// ErrURL is a webhook URL refused: not http(s), or its host resolves to an address
// deliveries must not reach.
var ErrURL = errors.New("webhook URL refused")

// URLError says why a URL is refused; it is ErrURL.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("%s: %s: %s", ErrURL, e.URL, e.Reason) }

// Is reports ErrURL.
func (e *URLError) Is(target error) bool { return target == ErrURL }

// Resolver resolves host names; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard keeps deliveries off internal addresses: loopback, private (RFC 1918, unique
// local), link-local (cloud metadata at 169.254.169.254 among them), shared (CGNAT),
// unspecified, multicast and the like. AllowPrivate (WEBHOOK_ALLOW_PRIVATE) lets them
// through, and plain http too.
type Guard struct {
	AllowPrivate bool
	// Resolver resolves hosts at creation (nil: net.DefaultResolver). Connections
	// check the address they dial, whatever resolved it.
	Resolver Resolver
}

// blocked are ranges no delivery reaches without AllowPrivate, beyond what netip's
// predicates cover.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 of any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local NAT64
	netip.MustParsePrefix("2002::/16"),      // 6to4 of any IPv4 address
	netip.MustParsePrefix("fec0::/10"),      // site-local
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("0.0.0.0/8"),      // this network
	netip.MustParsePrefix("255.255.255.255/32"),
}

// Internal reports whether a delivery must not reach addr.
func Internal(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() || !addr.IsValid() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// CheckURL checks a URL at creation: http(s) (https unless AllowPrivate), no user
// info, and every address its host resolves to public (unless AllowPrivate). A host
// that does not resolve (yet) is accepted: deliveries check the address they dial.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return &URLError{URL: raw, Reason: "not an absolute URL"}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.AllowPrivate:
	case u.Scheme == "http":
		return &URLError{URL: raw, Reason: "https is required (WEBHOOK_ALLOW_PRIVATE=true allows http)"}
	default:
		return &URLError{URL: raw, Reason: "the scheme must be https"}
	}
	if u.User != nil {
		return &URLError{URL: raw, Reason: "credentials in the URL are not accepted"}
	}
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			if _, ok := errors.AsType[*net.DNSError](err); ok {
				// A host not in the DNS yet (a receiver deployed after its webhook) is
				// accepted: each connection checks the address it dials.
				return nil
			}
			return &URLError{URL: raw, Reason: "its host does not resolve: " + err.Error()}
		}
	}
	for _, a := range addrs {
		if Internal(a) {
			return &URLError{URL: raw, Reason: fmt.Sprintf("its host resolves to %s, an internal address (WEBHOOK_ALLOW_PRIVATE=true allows it)", a)}
		}
	}
	return nil
}

// errInternalAddr is a connection refused by the guard.
var errInternalAddr = errors.New("internal address")

// control refuses, at connect time, an address the host resolved to that is internal:
// a host that resolved to a public address at creation may resolve to another now (DNS
// rebinding).
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errInternalAddr, address)
	}
	if Internal(ap.Addr()) {
		return fmt.Errorf("%w: %s (WEBHOOK_ALLOW_PRIVATE=true allows it)", errInternalAddr, ap.Addr())
	}
	return nil
}

// Client is the HTTP client of deliveries: each connection's address checked, no proxy,
// no redirect followed (a 3xx is a failed delivery), timeout per attempt, traced.
func (g Guard) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), Control: g.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	// Traced when its request's context holds a recording span (a delivery's): an HTTP
	// client span, and the trace passed on in the traceparent header.
	return &http.Client{Transport: tracing.Transport(tr), Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
