"""A jury of models (``--jury``): each juror judges every question once; the jury's verdict is
the majority per metric (rates) or the median (scores)."""
