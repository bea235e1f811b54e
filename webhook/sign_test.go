package webhook_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/webhook"
)

// The reference vector of the Standard Webhooks specification's libraries.
func TestSignMatchesTheStandardsVector(t *testing.T) {
	t.Parallel()
	key, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	body := []byte(`{"test": 2432232314}`)
	sig := webhook.Sign([][]byte{key}, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body)
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	require.True(t, webhook.Verify(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body, "v1,bad v1,"+sig[3:]))
	require.False(t, webhook.Verify(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265331", body, sig))

	// A rotation signs with both keys, new first.
	old, err := webhook.ParseSecret("whsec_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	require.NoError(t, err)
	both := webhook.Sign([][]byte{key, old}, "msg_1", time.Unix(1, 0), body)
	require.True(t, webhook.Verify(key, "msg_1", "1", body, both))
	require.True(t, webhook.Verify(old, "msg_1", "1", body, both))
}

func TestSealerNeedsItsKey(t *testing.T) {
	t.Parallel()
	_, err := webhook.NewSealer("")
	require.ErrorIs(t, err, webhook.ErrNoSecretKey)
	_, err = webhook.NewSealer("short")
	require.Error(t, err)
	s, err := webhook.NewSealer("0123456789abcdef0123456789abcdef")
	require.NoError(t, err)
	sealed := s.Seal([]byte("key"))
	require.NotContains(t, string(sealed), "key")
	got, err := s.Open(sealed)
	require.NoError(t, err)
	require.Equal(t, []byte("key"), got)
	other, err := webhook.NewSealer("another key of thirty-two chars!")
	require.NoError(t, err)
	_, err = other.Open(sealed)
	require.ErrorIs(t, err, webhook.ErrSealed)
}

// resolver answers fixed addresses, as a DNS server an attacker controls would.
type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestGuardRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := webhook.Guard{Resolver: resolver{
		"public.example":   {netip.MustParseAddr("93.184.216.34")},
		"rebind.example":   {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"private.example":  {netip.MustParseAddr("10.1.2.3")},
		"ula.example":      {netip.MustParseAddr("fd00::1")},
		"mapped.example":   {netip.MustParseAddr("::ffff:192.168.1.1")},
		"cgnat.example":    {netip.MustParseAddr("100.64.0.1")},
	}}
	require.NoError(t, g.CheckURL(ctx, "https://public.example/hook"))
	for _, u := range []string{
		"https://rebind.example/", "https://metadata.example/", "https://private.example/", "https://ula.example/",
		"https://mapped.example/", "https://cgnat.example/", "https://127.0.0.1/", "https://[::1]/", "https://0.0.0.0/",
		"http://public.example/", "ftp://public.example/", "https://user:pw@public.example/", "https://unknown.example/", "/relative",
	} {
		require.ErrorIs(t, g.CheckURL(ctx, u), webhook.ErrURL, u)
	}
	open := webhook.Guard{AllowPrivate: true, Resolver: g.Resolver}
	require.NoError(t, open.CheckURL(ctx, "http://127.0.0.1:8080/"))
}
