package riverjobs

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// pages is a Lister that answers its pages in turn, counting the calls.
type pages struct {
	sizes []int
	calls int
	err   error
}

func (p *pages) JobList(context.Context, *river.JobListParams) (*river.JobListResult, error) {
	if p.err != nil {
		return nil, p.err
	}
	n := p.sizes[p.calls]
	p.calls++
	res := &river.JobListResult{Jobs: make([]*rivertype.JobRow, n)}
	if n > 0 {
		res.LastCursor = &river.JobListCursor{}
	}
	return res, nil
}

func TestUnfinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	full := &pages{sizes: []int{page, page, 3}}
	n, err := Unfinished(ctx, full)
	require.NoError(t, err)
	require.Equal(t, 2*page+3, n, "every page is counted, up to the short one")
	require.Equal(t, 3, full.calls)

	empty := &pages{sizes: []int{0}}
	n, err = Unfinished(ctx, empty)
	require.NoError(t, err)
	require.Zero(t, n)

	down := errors.New("connection refused")
	_, err = Unfinished(ctx, &pages{err: down})
	require.ErrorIs(t, err, down)
}

func TestAnyUnfinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one := &pages{sizes: []int{1}}
	left, err := AnyUnfinished(ctx, one)
	require.NoError(t, err)
	require.True(t, left)
	require.Equal(t, 1, one.calls, "one page of one row, however long the queue")

	left, err = AnyUnfinished(ctx, &pages{sizes: []int{0}})
	require.NoError(t, err)
	require.False(t, left)
}
