package e2eutil

// The detached actor of the GCS fault-tolerance checks: created before the
// head Pod is deleted, it must answer with its state once a new head has
// recovered the cluster from Redis.
const (
	// CreateCounter creates a detached actor that needs a worker's CPU
	// (the Redis samples' heads offer none), so that it lives on the
	// worker while the head is replaced, and counts once: it prints
	// "count 1".
	CreateCounter = `
import ray
ray.init(namespace="e2e")
@ray.remote(num_cpus=1)
class Counter:
    def __init__(self):
        self.n = 0
    def incr(self):
        self.n += 1
        return self.n
    def get(self):
        return self.n
c = Counter.options(name="counter", lifetime="detached").remote()
print("count", ray.get(c.incr.remote()))
`
	// ReadCounter finds the detached actor by name and prints its count.
	// The handle is kept in a variable: before Ray 2.10 or so an actor
	// method holds only a weak reference to its handle, so calling a
	// method on the handle get_actor returns, unnamed, fails with
	// "Lost reference to actor" (seen on 2.9.3).
	ReadCounter = `
import ray
ray.init(namespace="e2e")
c = ray.get_actor("counter")
print("count", ray.get(c.get.remote(), timeout=60))
`
)
