"""The founding papers' claims and the checks that judge a study's results against them."""
