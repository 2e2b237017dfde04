"""`cachelab run SPEC --target k8s`: the experiment runner for a Kubernetes cluster.

The release of charts/testbed is upgraded with each point's values, the Jobs of manifests/ are
applied for it, and the results are collected from the pods' logs into the same results layout
as the local runner (docs/interfaces.md §4)."""
