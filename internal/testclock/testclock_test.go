package testclock_test

import (
	"fmt"
	"time"

	"github.com/credohq/credo/internal/testclock"
)

func Example() {
	c := testclock.New(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	c.Advance(36 * time.Hour)
	fmt.Println(c.Now().Format(time.DateTime))
	c.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(c.Now().Format(time.DateOnly))
	// Output:
	// 2026-03-02 12:00:00
	// 2026-01-01
}
