# Makes cellkey_magnitudes.csv: perturbed magnitude cells computed by cellKey 1.0.2's own
# per-cell functions (.perturb_cell_flex, .scramble_ckeys in R/utils_numtabs.R).
#
#   Rscript make_cellkey_magnitudes.R path/to/cellKey/R/utils_numtabs.R \
#       ptab_savings_all.txt ptab_savings_smallcells.txt ptab_parity.txt cellkey_magnitudes.csv
#
# The p-tables are those of this folder (the small-value one becomes cellKey's type
# small_cells). The cells are drawn here with a fixed seed; only the
# cases where tau-ARGUS 4.2 and cellKey 1.0.2 compute the same noise are drawn (see
# README.md). The tests never run R.
library(data.table)
args <- commandArgs(trailingOnly = TRUE)
source(args[1])
.ck_digits <- function() 8
.ck_debug <- function() FALSE
read_ptab <- function(path) fread(path, colClasses = list(character = "type"))
small <- read_ptab(args[3])
small$type <- "small_cells"
ptab <- rbind(read_ptab(args[2]), small, read_ptab(args[4]))
setnames(ptab, "p_int_ub", "ub")
set.seed(20240611)

m1_sq <- function(tab) {
  last <- tab[type == "small_cells"][i == max(i)]
  sum((last$i - last$j)^2 * last$p)
}

configs <- list(
  list(name = "flex-separation-muc", k = 1, fp = 1000, p = c(0.3, 0.03), q = 3,
       eps = 1, mu_c = 0.5, separation = TRUE, parity = FALSE, negative = FALSE, low = 0.5),
  list(name = "constant-muc", k = 1, fp = 1e12, p = c(0.1, 0.1), q = 1,
       eps = 1, mu_c = 1, separation = FALSE, parity = FALSE, negative = FALSE, low = 1),
  list(name = "flex-parity", k = 1, fp = 200, p = c(0.25, 0.05), q = 2,
       eps = 1, mu_c = 0, separation = FALSE, parity = TRUE, negative = FALSE, low = 1),
  list(name = "flex-top3", k = 3, fp = 50, p = c(0.2, 0.02), q = 3,
       eps = c(1, 0.5, 0.2), mu_c = 0, separation = FALSE, parity = FALSE, negative = FALSE,
       low = 60),
  list(name = "flex-separation-negative", k = 1, fp = 1000, p = c(0.3, 0.03), q = 3,
       eps = 1, mu_c = 0, separation = TRUE, parity = FALSE, negative = TRUE, low = 0.5)
)

rows <- list()
for (cfg in configs) {
  tab <- if (cfg$separation) ptab[type %in% c("all", "small_cells")] else
    if (cfg$parity) ptab[type %in% c("even", "odd")] else ptab[type == "all"]
  zs <- if (cfg$separation) sqrt(m1_sq(tab)) / (sqrt(sum(cfg$eps^2)) * cfg$p[1]) else 0
  params <- list(ptab = tab, zs = zs, mu_c = cfg$mu_c,
                 mult_params = list(fp = cfg$fp, p_small = cfg$p[1], p_large = cfg$p[2],
                                    epsilon = cfg$eps, q = cfg$q))
  for (cell in seq_len(80)) {
    n <- sample(1:6, 1)
    x <- round(cfg$low + rlnorm(n, meanlog = sample(c(0, 2, 4, 6, 9), 1), sdlog = 1), 2)
    if (cfg$negative && runif(1) < 0.5) x <- -x
    x <- x[order(-abs(x))]
    cv <- sum(x)
    top <- x[seq_len(min(cfg$k, n))]
    digits <- c(sample(0:9, 7, replace = TRUE), sample(1:9, 1))
    ck <- paste0("0.", paste(digits, collapse = ""))
    keys <- .scramble_ckeys(ck, top_k = length(top), same_key = FALSE)
    prot <- cfg$mu_c > 0 && abs(top[1]) >= zs && runif(1) < 0.4
    lookup <- if (cfg$parity) rep(if (n %% 2 == 0) "even" else "odd", length(top)) else
      rep("all", length(top))
    out <- .perturb_cell_flex(cv = cv, x = top, ck = keys, lookup = lookup, prot_req = prot,
                              params = params)
    rows[[length(rows) + 1]] <- data.table(
      config = cfg$name, k = cfg$k, fp = cfg$fp, p_small = cfg$p[1], p_large = cfg$p[2],
      q = cfg$q, epsilon = paste(cfg$eps, collapse = " "), mu_c = cfg$mu_c,
      separation = cfg$separation, parity = cfg$parity, contributors = n,
      value = sprintf("%.2f", cv), contributions = paste(sprintf("%.2f", x), collapse = " "),
      cell_key = ck, sensitive = prot, published = sprintf("%.10f", out$cv_p))
  }
}
fwrite(rbindlist(rows), args[5])
