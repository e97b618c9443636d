package fakemcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// client talks to Serve over pipes.
type client struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) read() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no message: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("%q: %v", c.out.Text(), err)
	}
	return m
}

func serve(t *testing.T, opts Options) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW, opts); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after stdin closed")
		}
	})
	return &client{t: t, in: inW, out: bufio.NewScanner(outR)}
}

func TestElicitationRoundTrip(t *testing.T) {
	log := filepath.Join(t.TempDir(), "mcp.jsonl")
	c := serve(t, Options{Log: log})
	c.send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-11-25"}})
	if r := c.read(); r["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", r)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	if tools := c.read()["result"].(map[string]any)["tools"].([]any); len(tools) != 3 {
		t.Fatalf("tools: %v", tools)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "form", "arguments": map[string]any{"message": "Who?"}}})
	req := c.read()
	params := req["params"].(map[string]any)
	if req["method"] != "elicitation/create" || params["message"] != "Who?" || params["requestedSchema"] == nil {
		t.Fatalf("elicitation request: %v", req)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}})
	res := c.read()
	text := res["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if res["id"].(float64) != 2 || !strings.Contains(text, `"action":"accept"`) || !strings.Contains(text, `"name":"Alice"`) {
		t.Fatalf("tool result: %v", res)
	}
	b, err := os.ReadFile(log)
	if err != nil || strings.Count(string(b), "\n") < 8 {
		t.Fatalf("log: %q %v", b, err)
	}
}

func TestBadInput(t *testing.T) {
	c := serve(t, Options{})
	c.in.Write([]byte("not json\n"))
	if r := c.read(); r["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Fatalf("parse error: %v", r)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "nope"})
	if r := c.read(); r["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Fatalf("unknown method: %v", r)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": map[string]any{"name": "missing"}})
	if r := c.read(); r["result"].(map[string]any)["isError"] != true {
		t.Fatalf("unknown tool: %v", r)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}})
	if r := c.read(); !strings.Contains(jsonOf(r), `"text":"hi"`) {
		t.Fatalf("echo: %v", r)
	}
}

func TestElicitTimeout(t *testing.T) {
	c := serve(t, Options{ElicitTimeout: 50 * time.Millisecond})
	c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "confirm"}})
	if r := c.read(); r["method"] != "elicitation/create" {
		t.Fatalf("%v", r)
	}
	if r := c.read(); !strings.Contains(jsonOf(r), "no answer from the client") {
		t.Fatalf("timeout result: %v", r)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
