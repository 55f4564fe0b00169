# GaussSuppression's pattern of a large_instances table, with the toolkit's primaries.
#
# Usage: Rscript gauss_pattern.R INPUT_DIR OUTPUT_CSV
#
# INPUT_DIR (written by `python benchmarks/foreign_patterns.py --gauss-inputs=NAME,DIR`) holds
#   cells.csv      one row per inner cell (every dimension at a leaf code): s3, r2, size,
#                  legal, freq, val (empty cells included, so the cells are the cross product)
#   dimlist_*.csv  one per dimension: the hierarchy as an sdcTable dimList (levels "@", "@@",
#                  ..., codes in depth-first order, the total "Total" first)
#   primary.csv    the cells the toolkit's rules made primary (p% with p = 15, frequency 3)
# OUTPUT_CSV gets the suppressed cells: s3, r2, size, legal, primary (TRUE/FALSE).
#
# GaussSuppression (MIT, Statistics Norway, https://github.com/statisticsnorway/ssb-gausssuppression)
# runs with its defaults otherwise: protectZeros = FALSE, secondaryZeros = FALSE, the default
# candidates (ordered by frequency) and singleton handling.
suppressPackageStartupMessages(library(GaussSuppression))
args <- commandArgs(trailingOnly = TRUE)
input <- args[1]
output <- args[2]
read <- function(name) read.csv(file.path(input, name), colClasses = "character")
cells <- read("cells.csv")
cells$freq <- as.numeric(cells$freq)
cells$val <- as.numeric(cells$val)
dims <- c("s3", "r2", "size", "legal")
hierarchies <- lapply(dims, function(d) read(paste0("dimlist_", d, ".csv")))
names(hierarchies) <- dims
primary <- read("primary.csv")
key <- function(frame) do.call(paste, c(frame[dims], sep = "|"))
wanted <- key(primary)
ours <- function(crossTable, ...) key(as.data.frame(crossTable)) %in% wanted
seconds <- system.time(
  result <- GaussSuppressionFromData(cells, freqVar = "freq", numVar = "val",
                                     hierarchies = hierarchies, primary = ours,
                                     protectZeros = FALSE, maxN = 0, printInc = FALSE)
)[["elapsed"]]
found <- sum(result$primary)
if (found != nrow(primary)) stop(sprintf("%d primaries matched of %d", found, nrow(primary)))
out <- result[result$suppressed, c(dims, "primary")]
write.csv(out, output, row.names = FALSE)
cat(sprintf("%s: %d cells, %d primary, %d secondary, %.1f s (GaussSuppression %s, SSBtools %s)\n",
            basename(output), nrow(result), found, sum(result$suppressed) - found, seconds,
            packageVersion("GaussSuppression"), packageVersion("SSBtools")))
