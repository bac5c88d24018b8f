from pkg.greet import hello

print(hello("world"))
