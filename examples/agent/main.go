// Command agent is the loop an agent developer builds on credo, over its HTTP API only:
// after a conversation, send it to memory; before the next answer, put what memory holds
// for the question into the prompt.
//
//	go run ./examples/agent --api http://127.0.0.1:9464 --key "$KEY" --scope user:ana
//
// It enqueues a short conversation, waits until its beliefs are extracted, asks memory
// for the context of the next question and prints the prompt it would send to its model.
// Without --key it relies on the worker's keyless loopback mode.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	api := flag.String("api", "http://127.0.0.1:9464", "the worker's HTTP address (HTTP_ADDR)")
	key := flag.String("key", os.Getenv("CREDO_KEY"), "an API key with the write and read rights (env CREDO_KEY)")
	scope := flag.String("scope", "user:ana", "whose memory")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	a := &agent{api: *api, key: *key, http: &http.Client{Timeout: 30 * time.Second}, poll: time.Second}
	err := a.run(ctx, *scope, os.Stdout)
	cancel() // not deferred: os.Exit runs no deferred call
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

type agent struct {
	api, key string
	http     *http.Client
	poll     time.Duration
}

// message is one turn of a conversation, as credo takes it.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (a *agent) run(ctx context.Context, scope string, out io.Writer) error {
	// 1. After a conversation: remember it.
	conversation := []message{
		{Role: "user", Content: "I moved to Miami last month, so no more New York winters."},
		{Role: "assistant", Content: "Congratulations on the move!"},
	}
	var enqueued struct {
		EpisodeIDs []int64 `json:"episode_ids"`
	}
	err := a.call(ctx, http.MethodPost, "/v1/transcripts", map[string]any{
		"scope": scope, "occurred_at": time.Now().UTC().Format(time.RFC3339), "messages": conversation,
	}, &enqueued)
	if err != nil {
		return fmt.Errorf("remember the conversation: %w", err)
	}
	// 2. Extraction runs in the background: wait until it is applied.
	if err := a.waitApplied(ctx, enqueued.EpisodeIDs[0]); err != nil {
		return err
	}
	// 3. Before the next answer: what memory holds for the question.
	question := "Any tips for the weather where I live?"
	var mem struct {
		Context string `json:"context"`
	}
	q := url.Values{"scope": {scope}, "query": {question}}
	if err := a.call(ctx, http.MethodGet, "/v1/context?"+q.Encode(), nil, &mem); err != nil {
		return fmt.Errorf("read memory: %w", err)
	}
	// 4. The prompt the agent sends to its own model.
	fmt.Fprintf(out, "System: You are a helpful assistant. What you know about the user:\n%s\nUser: %s\n", mem.Context, question)
	return nil
}

// waitApplied polls the episode until its extraction is applied, or says why not.
func (a *agent) waitApplied(ctx context.Context, id int64) error {
	for {
		var ep struct {
			State     string  `json:"state"`
			LastError *string `json:"last_error"`
		}
		if err := a.call(ctx, http.MethodGet, fmt.Sprintf("/v1/episodes/%d", id), nil, &ep); err != nil {
			return fmt.Errorf("read episode %d: %w", id, err)
		}
		switch ep.State {
		case "applied":
			return nil
		case "failed":
			msg := "no error recorded"
			if ep.LastError != nil {
				msg = *ep.LastError
			}
			return fmt.Errorf("episode %d failed: %s", id, msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("episode %d still %s: %w", id, ep.State, ctx.Err())
		case <-time.After(a.poll):
		}
	}
}

// call sends a JSON request and decodes the JSON answer; an error answer says its code.
func (a *agent) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.api+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.key != "" {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error.Code != "" {
			return fmt.Errorf("%s: %s (%s)", res.Status, e.Error.Message, e.Error.Code)
		}
		return errors.New(res.Status)
	}
	return json.Unmarshal(raw, out)
}
