import { hello } from "./greet.js";

/* 🎉 日本 */ console.log(hello("world"));
