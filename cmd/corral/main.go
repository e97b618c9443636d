// Command corral runs many Claude Code sessions in tmux and shows what each
// is doing. See README.md.
package main

import (
	"os"

	"github.com/corral-dev/corral/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
