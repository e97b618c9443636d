// Command fakeapi runs the fake Anthropic Messages API of package fakeapi on
// loopback for manual experiments with the real claude CLI:
//
//	go run ./internal/testkit/fakeapi/cmd/fakeapi -addr 127.0.0.1:8765 -dump /tmp/reqs -for 30m
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=sk-test claude
//
// Besides the default rules (RUNTOOL, SLOW, FAIL), a prompt containing ASKQ
// gets an AskUserQuestion tool_use. It logs one line per request and, with -dump, writes every request body to
// <dir>/<seq>-<kind>.json. It stops on SIGINT/SIGTERM or after -for.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	dump := flag.String("dump", "", "directory to write request bodies to")
	toolDir := flag.String("tooldir", ".", "directory of the RUNTOOL command's created_by_tool")
	slow := flag.Duration("slow", 5*time.Second, "pause of the SLOW rule")
	life := flag.Duration("for", time.Hour, "stop after this long")
	flag.Parse()
	if !strings.HasPrefix(*addr, "127.0.0.1:") {
		log.Fatal("fakeapi: -addr must be on 127.0.0.1")
	}
	s := fakeapi.New(fakeapi.Options{ToolDir: *toolDir, SlowDelay: *slow, Logf: log.Printf, Rules: []fakeapi.Rule{
		// ASKQ: an AskUserQuestion tool_use.
		{Contains: "ASKQ", Reply: fakeapi.AskUserQuestion("Color", "Which color do you want?", "Red", "Blue")},
	}})
	if err := s.ListenAddr(*addr); err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.URL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *life)
	defer cancel()
	seen := 0
	for {
		_, err := s.Await(ctx, *life, func(r fakeapi.Request) bool { return r.Seq > seen })
		if err != nil {
			return
		}
		for _, r := range s.Requests()[seen:] {
			seen = r.Seq
			if *dump != "" {
				name := filepath.Join(*dump, fmt.Sprintf("%03d-%s.json", r.Seq, r.Kind))
				if err := os.WriteFile(name, r.Body, 0o600); err != nil {
					log.Print(err)
				}
			}
		}
	}
}
