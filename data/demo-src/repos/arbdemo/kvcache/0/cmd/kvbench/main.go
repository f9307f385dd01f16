// Command kvbench measures cache throughput.
package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/arbdemo/kvcache"
)

func main() {
	n := flag.Int("n", 100000, "operations")
	capacity := flag.Int("capacity", 1024, "cache capacity")
	flag.Parse()
	c := kvcache.New(kvcache.WithCapacity(*capacity))
	start := time.Now()
	for i := 0; i < *n; i++ {
		key := strconv.Itoa(i % (*capacity * 2))
		if _, ok := c.Get(key); !ok {
			c.Set(key, i)
		}
	}
	fmt.Printf("%d ops in %s, hit ratio %.3f\n", *n, time.Since(start), c.Stats().HitRatio())
}
