module github.com/apiloom/apiloom/test/robustness

go 1.26.5

replace github.com/apiloom/apiloom => ../..

require github.com/anishathalye/porcupine v1.3.1
