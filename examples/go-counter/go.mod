module shoal.local/go-counter

go 1.19

require shoal.local/shoal v0.0.0

replace shoal.local/shoal => ../../bindings/go
