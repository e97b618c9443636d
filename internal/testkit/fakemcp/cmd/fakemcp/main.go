// Command fakemcp runs the fake MCP stdio server of package fakemcp, for
// manual experiments with the real claude CLI:
//
//	go build -o /tmp/fakemcp ./internal/testkit/fakemcp/cmd/fakemcp
//	claude --mcp-config '{"mcpServers":{"fake":{"command":"/tmp/fakemcp","args":["-log","/tmp/mcp.jsonl"]}}}'
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/corral-dev/corral/internal/testkit/fakemcp"
)

func main() {
	logPath := flag.String("log", "", "file to append every message to")
	name := flag.String("name", "fake", "server name")
	flag.Parse()
	if err := fakemcp.Serve(context.Background(), os.Stdin, os.Stdout, fakemcp.Options{Name: *name, Log: *logPath}); err != nil {
		log.Fatal(err)
	}
}
