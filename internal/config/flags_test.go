package config

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	newFS := func() (*flag.FlagSet, *bytes.Buffer) {
		var out bytes.Buffer
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		fs.SetOutput(&out)
		fs.Bool("drain", false, "exit once no job is left")
		return fs, &out
	}
	fs, out := newFS()
	err := ParseFlags(fs, []string{"--drian"})
	require.True(t, IsUsage(err))
	require.Equal(t, "flag provided but not defined: -drian (worker -h lists the flags)", err.Error())
	require.Empty(t, out.String(), "one line, printed once by the command, not the whole usage")

	fs, out = newFS()
	require.ErrorIs(t, ParseFlags(fs, []string{"-h"}), flag.ErrHelp)
	require.Contains(t, out.String(), "-drain", "-h prints the flags")

	fs, _ = newFS()
	require.NoError(t, ParseFlags(fs, []string{"--drain"}))
}
