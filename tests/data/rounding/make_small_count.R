# Makes small_count_inner.csv: inner cells (region x age x sex) drawn with a fixed seed and
# SmallCountRounding 1.2.5's PLSrounding of the tables region x age and sex x age (with all
# their margins), base 3, default settings.
#
#   R_LIBS=path/to/library Rscript make_small_count.R small_count_inner.csv
#
# The tests never run R.
library(SmallCountRounding)
args <- commandArgs(trailingOnly = TRUE)
set.seed(2018)
grid <- expand.grid(region = sprintf("r%02d", 1:12), age = c("a1", "a2", "a3", "a4", "a5"),
                    sex = c("m", "f"), stringsAsFactors = FALSE)
grid$freq <- rpois(nrow(grid), lambda = rep(c(0.6, 2, 6, 20), length.out = nrow(grid)))
out <- PLSrounding(grid, "freq", roundBase = 3, formula = ~region * age + sex * age,
                   printInc = FALSE)
inner <- out$inner
write.csv(inner[, c("region", "age", "sex", "original", "rounded")], args[1], row.names = FALSE)
