"""Analysis of cachelab results: operational laws, queueing models, 2^k r designs, aggregation.

Modules
-------
interactive_law
    R = N/X - Z per point, measured against predicted (closed systems).
queueing
    M/M/1, M/M/m (Erlang C), exact mean value analysis for closed networks, and the
    operational-law helpers the ASL reports used for bottleneck analysis.
factorial
    2^k r full factorial designs: sign table, effects, allocation of variation, confidence
    intervals (Jain, *The Art of Computer Systems Performance Analysis*, ch. 17-18).
aggregate
    Mean and standard deviation over repetitions the way the seed reports computed them.
"""
