// Command empty does nothing: bench/hookcost runs it as the floor of any Go
// hook binary (process start, dynamic loader if any, Go runtime start).
package main

func main() {}
