// Package pricing says what one Claude API response cost, in US dollars,
// from its usage (tokens in, out, written to and read from the prompt
// cache) and the model that answered: the figure tools such as ccusage
// show, computed from Anthropic's published list prices per million
// tokens (table.go says where and when they were read).
//
// A model the table does not know, or a usage it cannot price (fast mode,
// a service tier other than standard), has no price: Cost says so instead
// of guessing. It imports nothing of corral's and keeps no state.
package pricing
