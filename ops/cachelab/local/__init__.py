"""Local runner: real memcached/redis, middleware and loadgen processes on loopback ports."""
