// Command docmodel is the loopback OpenAI-compatible model the doc test
// serves on 127.0.0.1:8000 while a document's blocks run, so that the
// commands the docs show against http://127.0.0.1:8000/v1 run here, where
// no real model is reachable. It is llm/llmtest's server at a fixed
// address; its answers are deterministic and say nothing about a real
// model's quality.
//
// It prints "listening on ADDR" once it accepts connections and serves
// until it is stopped.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolenv/toolenv/llm/llmtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "address to listen on")
	flag.Parse()
	srv, err := llmtest.Listen(*addr, Reply)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docmodel:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", *addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	srv.Close()
}
