// set: tuned
// expect: stack-overflow rust_eval_overflow::eval
// An expression evaluator that looks an unbound variable up again instead of failing: it recurses
// until the main thread's stack runs out and Rust's guard-page handler aborts.
use std::collections::HashMap;

enum Expr {
    Num(i64),
    Add(Box<Expr>, Box<Expr>),
    Var(String),
}

fn eval(e: &Expr, env: &HashMap<String, i64>, depth: u64) -> i64 {
    let scratch = [depth as u8; 64];
    match e {
        Expr::Num(n) => *n + scratch[3] as i64,
        Expr::Var(name) => match env.get(name) {
            Some(v) => *v,
            None => eval(e, env, depth + 1) + scratch[(depth % 64) as usize] as i64, // CULPRIT
        },
        Expr::Add(a, b) => eval(a, env, depth + 1) + eval(b, env, depth + 1),
    }
}

fn main() {
    let env: HashMap<String, i64> = HashMap::new();
    let e = Expr::Add(Box::new(Expr::Num(1)), Box::new(Expr::Var("x".into())));
    println!("{}", eval(&e, &env, 0));
}
