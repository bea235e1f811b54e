package internal_test

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/credohq/credo/"

// upper are the packages above internal/ in the layout: what composes them (cmd and
// cmd/internal, the composition root and the metrics of the worker) and the stages.
var upper = []string{"api", "bench", "changes", "cmd", "consolidate", "eval", "examples", "extract", "inspector",
	"operator", "pipelinetest", "recall", "reembed", "reliability", "retention", "transfer", "webhook"}

// TestInternalHoldsLeaves: the packages of internal/ import nothing from the layers
// above them (issue 40, item 16), so that every package may use them. Test helpers are
// no exception (issue 51, item 11): one that runs the stages (pipelinetest) stands
// beside cmd, above them.
func TestInternalHoldsLeaves(t *testing.T) {
	t.Parallel()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		name := filepath.Base(path)
		if name == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if _, ok := errors.AsType[*build.NoGoError](err); ok {
			return nil
		}
		require.NoError(t, err)
		checked++
		for _, imp := range pkg.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			for _, u := range upper {
				require.False(t, rel == u || strings.HasPrefix(rel, u+"/"), "internal/%s imports %s, a package above it", path, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, checked, 5, "the walk found internal's packages")
}
