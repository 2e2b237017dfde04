"""The report's figures: each a function of a section's typed data (or the analysed results)
that draws on the ``axes`` it is given; `plan` says which apply and saves them."""
