module shoal.local/shoal

go 1.19
