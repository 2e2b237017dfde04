/** What each client sends: operation mix, key sequences and values (memtier's rules). */
package dev.cachelab.loadgen.workload;
