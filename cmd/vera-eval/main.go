// Package main is the vera-eval command: it evaluates the gateway's detectors offline: the VAD and
// turn detector against labelled audio ("vera-eval vad DIR") and the local
// crisis detector against labelled utterances ("vera-eval safety FILE").
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one vera-eval subcommand. Each lives in its own file and
// registers itself in init.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "vera-eval: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "vera-eval %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: vera-eval COMMAND [flags] ARGS")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
}
