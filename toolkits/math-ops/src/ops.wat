;; A component exporting `example:math/ops@0.1.0`: `add` on two s64.
;; It imports nothing, so it holds no cap; composed into a command that
;; imports the interface, it serves that import.
(component
  (core module $impl
    (func (export "add") (param i64 i64) (result i64)
      (i64.add (local.get 0) (local.get 1))))
  (core instance $i (instantiate $impl))
  (func $add (param "a" s64) (param "b" s64) (result s64)
    (canon lift (core func $i "add")))
  (instance $ops (export "add" (func $add)))
  (export "example:math/ops@0.1.0" (instance $ops)))
