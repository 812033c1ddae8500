"""Data: readers of data files, streams and their cache, downloads and the LIBSVM catalogue."""
