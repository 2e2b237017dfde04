/** Output in memtier's formats: the text summary, the JSON file, HdrHistogram files, progress. */
package dev.cachelab.loadgen.output;
